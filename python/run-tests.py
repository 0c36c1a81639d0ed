#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run pytest and print what selftests/totals.awk counts: one TAP line per
test, then "# Totals: pass:N fail:N skip:N".  Exit status 1 on any failure.

usage: run-tests.py [pytest arguments]
"""
import sys

import pytest


class Tap:
    def __init__(self) -> None:
        self.n = 0
        self.counts = {"pass": 0, "fail": 0, "skip": 0}
        self.seen = set()

    def _line(self, status: str, nodeid: str, note: str = "") -> None:
        self.n += 1
        self.counts[status] += 1
        word = "not ok" if status == "fail" else "ok"
        skip = f" # SKIP {note}" if status == "skip" else ""
        print(f"{word} {self.n} - {nodeid}{skip}", flush=True)

    def pytest_runtest_logreport(self, report) -> None:
        if report.nodeid in self.seen:
            if report.failed and report.when == "teardown":
                self._line("fail", report.nodeid + " (teardown)")
            return
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            self._line("skip", report.nodeid, reason)
        elif report.failed:
            self._line("fail", report.nodeid)
        elif report.when == "call":
            self._line("pass", report.nodeid)
        else:
            return
        self.seen.add(report.nodeid)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self._line("fail", f"collecting {report.nodeid}")


def main() -> int:
    tap = Tap()
    rc = pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[tap])
    c = tap.counts
    print(f"# Totals: pass:{c['pass']} fail:{c['fail']} xfail:0 xpass:0 skip:{c['skip']} error:0")
    return 1 if c["fail"] or rc not in (0, 5) else 0


if __name__ == "__main__":
    sys.exit(main())
