"""Progress of a run: numbered per-cell lines with elapsed time and ETA, and a heartbeat.

Every finished cell prints one line ``[k/N] <cell> done 1.23s (elapsed 0:42, ETA 3:10)``,
whether or not a terminal is attached (nohup, a batch scheduler or ``| tee`` see the same
lines). While cells run, a heartbeat line ``[k/N] running: <cells> (for 1:05, ...)`` follows
whenever nothing was printed for ``heartbeat`` seconds (default 30; ``MLX_HEARTBEAT`` sets it),
so a long cell never leaves the log silent; on a terminal the bar also ticks every second
and names the running cells.

The running cells are known from the order of dispatch: the process pool takes cells first in,
first out, so the oldest ``jobs`` dispatched and unfinished cells are the ones running.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["Progress", "fmt_duration", "heartbeat_seconds"]

DEFAULT_HEARTBEAT = 30.0


def heartbeat_seconds() -> float:
    """The heartbeat interval: ``MLX_HEARTBEAT`` seconds when set (and positive), else 30."""
    try:
        value = float(os.environ.get("MLX_HEARTBEAT", DEFAULT_HEARTBEAT))
    except ValueError:
        return DEFAULT_HEARTBEAT
    return value if value > 0 else DEFAULT_HEARTBEAT


def fmt_duration(seconds: float) -> str:
    """``0:07``, ``12:34``, ``1:02:03``."""
    s = int(round(max(0.0, seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Numbered cell lines, the heartbeat thread and (on a terminal) a ticking bar.

    ``dispatched(cell)`` when a cell is handed to a worker, ``finished(cell, text)`` when its
    record is back; ``close()`` stops the heartbeat. ``jobs`` cells run at once (None: the
    running cells are not known, e.g. on a Dask cluster, and the heartbeat gives a count).
    """

    def __init__(self, total: int, *, quiet: bool = False, bar: bool = False,
                 jobs: int | None = 1, heartbeat: float | None = None, desc: str = "",
                 clock=time.monotonic):
        self.total, self.quiet, self.jobs, self.clock = total, quiet, jobs, clock
        self.interval = heartbeat if heartbeat is not None else heartbeat_seconds()
        self.done = 0
        self.started = clock()
        self._outstanding: dict = {}      # cell id -> [cell, start of its run or None]
        self._lock = threading.RLock()
        self._last_output = self.started
        self._stop = threading.Event()
        from tqdm import tqdm  # 35 ms to import (it reads package metadata): on use

        self._bar = tqdm(total=total, desc=desc, unit="cell", disable=quiet or not bar
                         or not total, leave=False)
        self._thread = None
        if not quiet and total:
            self._thread = threading.Thread(target=self._beat, name="mlx-heartbeat",
                                            daemon=True)
            self._thread.start()

    # ---------------------------------------------------------------- events
    def dispatched(self, cell) -> None:
        with self._lock:
            self._outstanding[cell.cell_id()] = [cell, None]
            self._mark_running()

    def finished(self, cell, text: str) -> None:
        with self._lock:
            self._outstanding.pop(cell.cell_id(), None)
            self.done += 1
            self._mark_running()
            self._write(f"[{self.done}/{self.total}] {text} ({self.timing()})")
            self._bar.update(1)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self._bar.close()

    # ---------------------------------------------------------------- texts
    def timing(self) -> str:
        """``elapsed 0:42, ETA 3:10`` (ETA from the mean time per finished cell so far)."""
        elapsed = self.clock() - self.started
        text = f"elapsed {fmt_duration(elapsed)}"
        if 0 < self.done < self.total:
            text += f", ETA {fmt_duration(elapsed / self.done * (self.total - self.done))}"
        return text

    def running(self) -> list:
        """(cell, seconds it has run) of the cells running now, oldest first."""
        now = self.clock()
        with self._lock:
            return [(cell, now - start) for cell, start in self._outstanding.values()
                    if start is not None]

    def heartbeat_line(self) -> str:
        with self._lock:
            running = self.running()
            if running:
                names = ", ".join(f"{c.describe()} for {fmt_duration(s)}" for c, s in running)
                what = f"running: {names}"
            else:
                what = f"{self.total - self.done} cell(s) not finished yet"
            return f"[{self.done}/{self.total}] {what} ({self.timing()})"

    # ---------------------------------------------------------------- internals
    def _mark_running(self) -> None:
        """The first ``jobs`` outstanding cells run (first in, first out); note their start."""
        if self.jobs is None:
            return
        now = self.clock()
        for entry in list(self._outstanding.values())[: self.jobs]:
            if entry[1] is None:
                entry[1] = now

    def _write(self, line: str) -> None:
        self._last_output = self.clock()
        if not self.quiet:
            from tqdm import tqdm

            tqdm.write(line)

    def _beat(self) -> None:
        tick = min(1.0, self.interval)
        while not self._stop.wait(tick):
            with self._lock:
                if self.done >= self.total:
                    continue
                if not self._bar.disable:
                    names = ", ".join(c.describe() for c, _ in self.running())
                    self._bar.set_postfix_str(names[:120], refresh=False)
                    self._bar.refresh()
                if self.clock() - self._last_output >= self.interval:
                    self._write(self.heartbeat_line())
