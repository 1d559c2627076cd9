"""room.py on hand-made daemon log lines."""
import datetime
import json
import unittest

import room

START = 1_000_000.0  # the trace's start, epoch s
MIB = 2**20


def line(t, squeezed, **steps):
    ts = datetime.datetime.fromtimestamp(START + t, tz=datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    return json.dumps({"timestamp": ts, "event": "room", "squeezed": json.dumps(squeezed), **steps})


def entry(key, holds, target, wake_s=None):
    e = {"key": key, "holds": holds * MIB, "target": target * MIB, "whole": holds * MIB}
    e["expected_wake_in"] = None if wake_s is None else {"secs": wake_s, "nanos": 0}
    return e


class RoomTest(unittest.TestCase):
    def test_the_first_plan_below_half_of_what_it_held_is_the_squeeze(self):
        lines = [
            "not json",
            json.dumps({"timestamp": "1970-01-12T13:46:41Z", "event": "read-back"}),
            line(1.0, [entry("/f", 60, 40, 5)], woken=100 * MIB),  # kept more than half: no squeeze
            line(2.0, [entry("/g", 60, 4), entry("/f", 60, 4, 7)], woken=200 * MIB, kept_whole=3),
            line(3.0, [entry("/f", 4, 4)]),
        ]
        rooms = room.room_events(lines, START)
        self.assertEqual(len(rooms), 3)
        t, acct, place, s = room.squeeze_of(rooms, "/f", 0.0, 10.0)
        self.assertAlmostEqual(t, 2.0, places=3)
        self.assertEqual((place, acct["woken"], acct["kept_whole"]), (1, 200 * MIB, 3))
        self.assertEqual(room.wake_in_s(s), 7)
        self.assertIsNone(room.squeeze_of(rooms, "/f", 2.5, 10.0), "not squeezed in that gap")
        self.assertIsNone(room.wake_in_s(entry("/g", 1, 1)))


if __name__ == "__main__":
    unittest.main()
