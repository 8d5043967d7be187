"""What a process or thread of a benchmark did with the CPUs, read from Linux's /proc: seconds
on a core, seconds runnable but waiting for one (the run queue: what sharing the cores with
other busy threads cost it), times it was given a core, and context switches (voluntary: it
waited for something; involuntary: it was preempted). These figures hold on a shared machine
where wall seconds do not: they say who competed with whom. Where /proc has no such file (a
thread that has ended, another system) every figure reads 0."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Usage:
    cpu: float = 0.0  # seconds on a core (schedstat)
    waiting: float = 0.0  # seconds runnable, waiting for a core (schedstat)
    slices: int = 0  # times it was given a core (schedstat)
    voluntary: int = 0  # context switches: it waited (a read, a lock, a sleep)
    involuntary: int = 0  # context switches: it was preempted

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def __sub__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


def task(pid: int, tid: int | None = None) -> Usage:
    """One thread's usage (the process's first thread when `tid` is None)."""
    base = Path(f"/proc/{pid}/task/{pid if tid is None else tid}")
    try:
        run_ns, wait_ns, slices = (int(x) for x in (base / "schedstat").read_text().split()[:3])
        switches = {}
        for line in (base / "status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                switches[name] = int(value)
    except (OSError, ValueError):
        return Usage()
    return Usage(
        run_ns / 1e9,
        wait_ns / 1e9,
        slices,
        switches.get("voluntary_ctxt_switches", 0),
        switches.get("nonvoluntary_ctxt_switches", 0),
    )


def process(pid: int) -> Usage:
    """Every live thread of process `pid`, added up (a thread that has ended is not counted)."""
    try:
        tids = [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return Usage()
    total = Usage()
    for tid in tids:
        total += task(pid, tid)
    return total


def processes(pids: list[int] | tuple[int, ...]) -> Usage:
    total = Usage()
    for pid in pids:
        total += process(pid)
    return total
