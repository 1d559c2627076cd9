//! bench/faas's pieces that run without a serverless host: the invocation
//! trace generator's unit tests (the shape it promises, reproducible from
//! its parameters, bad parameters refused).

use memext_e2e::docker::python_unit_tests;

#[test]
fn faas_trace_unit_tests_pass() {
    python_unit_tests("bench/faas");
}
