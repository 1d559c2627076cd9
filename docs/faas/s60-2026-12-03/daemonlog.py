"""A bench/faas run's daemon log as (seconds into the trace, function, event)."""
import datetime
import glob
import gzip
import json


def events(d):
    """Yields (t, function, event dict) for every event of a function's context."""
    m = json.load(open(glob.glob(d + '/functions-*.json')[0]))
    t0 = m['trace_start_epoch']
    inv = {v: k for k, v in m['cgroups'].items()}
    log = sorted(glob.glob(d + '/*daemon*.log*'))[0]
    for line in (gzip.open(log, 'rt') if log.endswith('.gz') else open(log)):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        fn = inv.get(e.get('context'))
        if fn is None:
            continue
        ts = datetime.datetime.fromisoformat(e['timestamp'].replace('Z', '+00:00')).timestamp() - t0
        yield ts, fn, e
