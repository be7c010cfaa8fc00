"""A corpus of rt-app files written for these tests from rt-app's documentation
(doc/tutorial.txt) and the grammar its parser reads (src/rt-app_parse_config.c) — every key
rt-app reads, its defaults, the dialect (comments, trailing commas, repeated keys), and keys it
reads past — each run as hetlab runs it. A file runs as it is, runs with one warning per key
rt-app would read past (or per setting for a newer kernel), or is refused with one line naming
why (what rt-app itself refuses, or what hetlab cannot simulate). EXPECTED says which, per file;
`python tests/test_rtapp_corpus.py` prints the counts."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

from hetlab import api
from hetlab.api import HetlabError

CORPUS = Path(__file__).resolve().parent / "data" / "rtapp_corpus"

# file -> (status, what its warnings or its error say)
EXPECTED = {
    "01-periodic-comments.json": ("run", ""),
    "02-legacy-global-keys.json": ("warned", "global.frag: rt-app does not read this key"),
    "03-phases-and-loops.json": ("run", ""),
    "04-many-loops.json": ("run", ""),
    "05-repeated-keys.json": ("run", ""),
    "06-mutex-and-condition.json": ("run", ""),
    "07-suspend-resume.json": ("run", ""),
    "08-barrier.json": ("run", ""),
    "09-fork.json": ("run", ""),
    "10-memory-events.json": ("run", ""),
    "11-shared-memrun.json": ("run", ""),
    "12-yield-and-semaphore.json": ("run", ""),
    "13-realtime.json": ("run", ""),
    "14-deadline.json": ("run", ""),
    "15-phase-attributes.json": ("run", ""),
    "16-taskgroups.json": ("run", ""),
    "17-delay-and-numa.json": ("run", ""),
    "18-custom-slice.json": ("warned", "Linux 6.12's custom slice"),
    "19-unknown-keys.json": ("warned", "tasks.thread0.phases.p0.label: rt-app does not read"),
    "20-ftrace-bool-and-logs.json": ("run", ""),
    "21-io-device.json": ("refused", "global.io_device: only /dev/null is supported"),
    "22-priority-inheritance.json": ("refused", "priority inheritance is not modelled"),
    "23-deadline-phase-change.json": ("refused", "changes a SCHED_DEADLINE task's policy or reservation"),
    "24-phase-loop-zero.json": ("refused", "until its loop counter wraps"),
    "25-unknown-policy.json": ("refused", "unknown policy 'SCHED_NORMAL'"),
    "26-events-beside-phases.json": ("warned", "tasks.t.sleep: an event beside `phases`"),
}


def outcome(path: Path) -> tuple[str, list[str], str]:
    """(run, warned or refused; the warnings; the error) of one file, run for at most 1 s."""
    try:
        warnings, _ = api.rtapp_notes(path)
        api.simulate("exynos5422", workload=str(path), scheduler="eas", governor="schedutil", time_limit_s=1.0)
    except HetlabError as e:
        return "refused", [], str(e)
    return ("warned" if warnings else "run"), warnings, ""


def test_the_corpus_is_every_file_expected():
    assert sorted(p.name for p in CORPUS.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_runs_warns_or_is_refused_as_expected(name):
    status, says = EXPECTED[name]
    got, warnings, error = outcome(CORPUS / name)
    assert got == status, (warnings, error)
    if status == "warned":
        assert any(says in w for w in warnings), warnings
        assert len(warnings) == len(set(warnings)) and all("\n" not in w for w in warnings)
    if status == "refused":
        assert says in error and "\n" not in error, error


if __name__ == "__main__":
    counts = collections.Counter()
    for path in sorted(CORPUS.glob("*.json")):
        status, warnings, error = outcome(path)
        counts[status] += 1
        print(f"{path.name:34} {status:8} {len(warnings)} warning(s) {error}")
    print(f"{len(EXPECTED)} files: {counts['run']} run, {counts['warned']} warned, {counts['refused']} refused")
    sys.exit(0)
