"""Unit tests of the turns WFS-T Transactions take among the processes of a host (stdlib only).

Each WriteTurns opens the lock file of its own, as each process does: flock locks belong to an
open file, so two of them in one test stand for two processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest

from steward_monitor.turns import WriteTurns

HOLD_AND_WAIT = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("holding", flush=True)
time.sleep(60)
"""


class WriteTurnsTest(unittest.TestCase):
    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.path = os.path.join(folder.name, "turns.lock")
        self.failures: list[str] = []

    def turns(self, longest_wait_s: float = 0.2) -> WriteTurns:
        return WriteTurns(self.path, self.failures.append, longest_wait_s)

    def test_one_transaction_at_a_time_whatever_the_case_of_its_name(self) -> None:
        first, second = self.turns(), self.turns()
        first.begin("Transaction")
        self.assertTrue(first.holding)
        second.begin("TRANSACTION")
        self.assertFalse(second.holding)
        self.assertEqual(len(self.failures), 1, self.failures)
        first.end()
        self.assertFalse(first.holding)
        second.begin("transaction")
        self.assertTrue(second.holding)

    def test_other_requests_take_no_turn_and_wait_for_none(self) -> None:
        writer, reader = self.turns(), self.turns(longest_wait_s=30)
        writer.begin("Transaction")
        reader.begin("GetFeature")
        self.assertFalse(reader.holding)
        self.assertEqual(self.failures, [])

    def test_a_request_that_never_completed_keeps_no_turn(self) -> None:
        first, second = self.turns(), self.turns()
        first.begin("Transaction")
        first.begin("GetMap")
        self.assertFalse(first.holding)
        second.begin("Transaction")
        self.assertTrue(second.holding)

    def test_the_turn_of_a_process_that_dies_passes_on(self) -> None:
        open(self.path, "w").close()
        holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_WAIT, self.path], stdout=subprocess.PIPE)
        self.assertEqual(holder.stdout.readline() if holder.stdout else b"", b"holding\n")
        waiting = self.turns(longest_wait_s=0.1)
        waiting.begin("Transaction")
        self.assertFalse(waiting.holding)
        holder.kill()
        holder.wait()
        if holder.stdout:
            holder.stdout.close()
        waiting.begin("Transaction")
        self.assertTrue(waiting.holding)

    def test_a_lock_file_it_cannot_open_is_reported_and_the_request_goes_on(self) -> None:
        turns = WriteTurns(os.path.join(self.path, "nowhere", "turns.lock"), self.failures.append)
        turns.begin("Transaction")
        self.assertFalse(turns.holding)
        self.assertEqual(len(self.failures), 1)


if __name__ == "__main__":
    unittest.main()
