"""What a memext daemon leaves on disk, read: the structured events and
problems of its JSON log, and the knobs its ledger owns (re-exported by
memextbench)."""

import datetime
import gzip
import json
import os


def _json_lines(path):
    """The JSON objects of a file of JSON lines, gzipped or not (other lines
    skipped)."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict):
                yield e


def daemon_events(log_path, event=None):
    """The structured events of a daemon log written with `--log-format json`
    (as `start_daemon` writes it), each a dict of its fields plus `at`, its
    wall-clock time in seconds; only those named `event` if given."""
    out = []
    for e in _json_lines(log_path):
        if "event" not in e or (event and e["event"] != event):
            continue
        stamp = e.get("timestamp", "").rstrip("Z")[:26]  # microseconds: fromisoformat's limit
        e["at"] = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.timezone.utc).timestamp()
        out.append(e)
    return out


def daemon_problems(log_path):
    """The daemon's warnings and errors: the lines of its JSON log at level
    WARN or ERROR, whether or not they carry an event."""
    return [e for e in _json_lines(log_path) if e.get("level") in ("ERROR", "WARN")]


def ledger_records(state_dir):
    """The knobs a daemon owns: STATE_DIR/daemon.json's records with the
    lines of daemon.journal of the same generation applied (the daemon's
    ledger_store)."""
    try:
        with open(os.path.join(state_dir, "daemon.json")) as f:
            snap = json.load(f)
        records, gen = snap["records"], snap.get("generation", 0)
    except (OSError, ValueError, KeyError):
        records, gen = [], 0
    try:
        with open(os.path.join(state_dir, "daemon.journal")) as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    key = lambda r: (r["cgroup"], r["knob"])  # noqa: E731
    for text in lines:
        try:
            line = json.loads(text)
        except ValueError:
            break  # a torn last line
        if line.get("g") != gen:
            continue
        e = line["e"]
        if "set" in e:
            r = e["set"]
            at = next((i for i, x in enumerate(records) if key(x) == key(r)), None)
            if at is None:
                records.append(r)
            else:
                records[at] = r
        elif "drop" in e:
            records = [x for x in records if key(x) != (e["drop"]["cgroup"], e["drop"]["knob"])]
        elif "drop_cgroup" in e:
            records = [x for x in records if x["cgroup"] != e["drop_cgroup"]]
    return records
