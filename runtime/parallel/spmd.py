"""The linalg executor's two-process mode (`LinalgProgram.threading = "processes"`): SPMD over a fork.

Worker threads pay a blocked thread's wake-up (64-69 us on this VM) and GIL hand-offs at every split
(benchmarks/handoff.py). Here a second process, forked from the caller once the program has run once,
runs the same step list in lockstep; each process has its own GIL, and they meet at spin barriers in
shared memory instead of waking each other.

- **Memory.** The memory plan's blocks move into one anonymous shared mapping (`mmap(-1, n)`, shared
  across `fork`), with a buffer per argument and a small control area: both processes see the same
  activations at the same addresses. Rank 0 (the caller) copies the inputs in at each call and the
  results out after the run; constants are the fork's copy-on-write pages.
- **Which step runs where** (decided after the first run, whose bindings the fork inherits:
  runtime/parallel/spmd_steps.py): a step runs on both ranks when its kind says it writes memory only within
  `threads.run_parts`/`run_split` parts and `run_alone` (an `spmd` attribute: `plan.ChunkedOp`
  steps, `plan.FusedTail`, `conv_epilogue.ConvStep`, `pad_step.PadStep`,
  `contraction_plan.ContractionStep`, ...) and every slot it reads, binds or writes was bound, in
  that first run, to memory both processes share or hold alike: a planned buffer, a view of one, an
  argument's buffer, a constant or a view of one. A planned program binds the same arrays on every
  run, so rank 1 keeps the first run's bindings and runs nothing but these steps; every other step
  runs on rank 0 only, unsplit.
- **Phases.** In a step both ranks run, each `run_split` is a phase: both arrive (so rank 1 reads
  nothing rank 0's own steps are still writing), each runs its share of the parts (round robin),
  both leave. Work that is not split (`run_alone`) runs on rank 0 only, so rank 1 reads and writes
  shared memory only inside phases. Each barrier carries (step, phase): ranks whose control flow
  differs fail loudly instead of computing garbage.
- **Barriers** spin on the other rank's counter in the control area, then `sched_yield`, then sleep
  in short naps, so a machine where another process holds a core degrades instead of stalling.
  Data is stored before the counter that publishes it, and x86 keeps stores in order (TSO): the
  mode is x86-64 only. Between runs rank 1 spins a while, then blocks on a pipe read.
- **Lifecycle and errors.** Rank 1 leaves (`os._exit`) when the program is closed or collected,
  or when its parent is gone (pipe end of file, `os.getppid`). An exception on rank 1 is written
  to the control area and raised on rank 0 as one `ExecutionError`; an exception on rank 0 aborts
  rank 1's run; either way the next call works. Nothing is pickled: the fork shares the steps.
"""

from __future__ import annotations

import gc
import mmap
import os
import platform
import select
import signal
import threading
import time
import warnings
import weakref

import numpy as np
from xdsl.dialects.builtin import ShapedType

from xrelay.runtime.parallel import threads
from xrelay.runtime.kernels.body_program import numpy_dtype
from xrelay.runtime.kernels.linalg_structured import ExecutionError
from xrelay.runtime.parallel.spmd_fallback import Starvation
from xrelay.runtime.parallel.spmd_lanes import lane_phases, plan_lanes
from xrelay.runtime.parallel.spmd_steps import shared_slots, spmd_steps

SPIN_S = 50e-6
"""A barrier spins this long before it starts yielding the core (`os.sched_yield`)."""
YIELD_S = 2e-3
"""... and yields this long before it sleeps in `NAP_S` naps."""
NAP_S = 50e-6
IDLE_SPIN_S = 20e-3
"""Between runs rank 1 spins (and yields) this long before it blocks on the pipe."""
CHECK_S = 1e-3
"""How often a long wait looks whether the other process is still there."""
CHECK_BINDINGS = False
"""Whether rank 0 checks after every run that the slots rank 1 uses held the first run's arrays
(tests turn it on)."""

AUTO_FORK_CALLS = 3
"""With `threading = "auto"` (the default), a program's calls on 2 or more BLAS threads run on
threads until this one, which forks: a program called once or twice (most tests, a one-off run)
never forks, one called repeatedly (a benchmark, a server) pays the fork once."""

ALIGN = 64
CONTROL_BYTES = 4096
# Slots of the control area (int64); each rank's barrier counter on a cache line of its own.
RUN, DONE, ABORT, ERROR_RUN, ERROR_STEP, ERROR_LEN, ASLEEP, QUIT = range(8)
COUNT = (8, 16)
TAG = (24, 32)
WAITED, WAITS = (40, 48), (41, 49)
"""Per rank, nanoseconds spent waiting at barriers and how many waits (`TwoProcesses.stats`)."""
ALONE = 56
"""Nanoseconds rank 0 spent on work of the steps both run that it does alone (`run_alone`)."""
MESSAGE = 512
"""Byte offset of rank 1's error message."""

_open_fds: set[int] = set()
"""Pipe ends of this process's groups: a newly forked rank 1 closes them (they are not its own)."""


def why_not_platform() -> str | None:
    """Why no program can run in two processes here, or None."""
    if not hasattr(os, "fork"):
        return "os.fork is not available"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "its barriers rely on x86-64's store order"
    return None


def why_not(program) -> str | None:
    """Why `program` cannot run in two processes (it then runs on threads), or None."""
    if program.schedule is None:
        return "the program's memory is not planned at the tensor level"
    return why_not_platform()


def run(program, env: list) -> bool:
    """Run `program`'s steps in two processes on `env` (its arguments bound); False, having done
    nothing, when it cannot (warned once per program), numpy's BLAS has one thread, or the mode is
    starved and this call runs on threads (runtime/parallel/spmd_fallback.py)."""
    group = program.__dict__.get("_processes")
    if group is False or threads.split_threads() < 2:
        return False
    if group is None:  # moves the planned memory: `group.run` binds `env` anew
        auto = program.threading == "auto"
        if auto:
            program._calls = program.__dict__.get("_calls", 0) + 1
            if program._calls < AUTO_FORK_CALLS:
                return False
        reason = why_not(program)
        if reason is not None:
            if not auto:
                warnings.warn(f"threading='processes' runs on threads instead: {reason}", RuntimeWarning,
                              stacklevel=3)
            program._processes = False
            return False
        group = program._processes = TwoProcesses(program)
    if group.starvation.use_threads():
        return False
    runs, waited, start = group.runs, group.ctl[WAITED[0]], time.perf_counter_ns()
    group.run(env)
    if group.runs > runs:  # (not the first call, which ran before the fork)
        group.starvation.record(time.perf_counter_ns() - start, group.ctl[WAITED[0]] - waited)
    return True


def close(program) -> None:
    group = program.__dict__.get("_processes")
    if group:
        group.close()


class _Abandon(Exception):
    """Rank 1 leaves the current run (rank 0 aborted it)."""


class Rank:
    """One process's side of a run (`threads.spmd.rank` while it runs): its phase barriers."""

    def __init__(self, group: TwoProcesses, rank: int):
        self.group, self.ctl, self.rank, self.other = group, group.ctl, rank, 1 - rank
        self.run = self.seq = 0
        self.step, self.step_spmd, self.phase, self.in_phase = -1, False, 0, False

    def split(self, calls: list) -> bool:
        """Run `calls` as a phase, or here when nested in a part; False for a step rank 0 runs on
        its own, whose splits use worker threads as in the thread mode (a dense layer's matmul)."""
        if self.in_phase:
            for call in calls:
                call()
            return True
        if not self.step_spmd:
            return False
        if len(calls) < 2:
            for call in calls:
                self.alone(call)
            return True
        self.barrier()
        self.in_phase = True
        try:
            for call in calls[self.rank::2]:
                call()
        finally:
            self.in_phase = False
        self.barrier()
        return True

    def alone(self, call) -> None:
        if self.in_phase or not self.step_spmd:
            call()
        elif self.rank == 0:
            self.in_phase = True  # splits within run here, whole
            start = time.perf_counter_ns()
            try:
                call()
            finally:
                self.in_phase = False
                self.ctl[ALONE] += time.perf_counter_ns() - start

    def barrier(self) -> None:
        ctl, me, other = self.ctl, self.rank, self.other
        self.seq += 1
        self.phase += 1
        value = (self.run << 32) | self.seq
        tag = (self.step << 16) | self.phase
        ctl[TAG[me] + (self.seq & 1)] = tag
        ctl[COUNT[me]] = value  # after the data and the tag (x86-64 keeps stores in order)
        if ctl[COUNT[other]] < value:
            start = time.perf_counter_ns()
            self.group.wait(self, COUNT[other], value)
            ctl[WAITED[me]] += time.perf_counter_ns() - start
            ctl[WAITS[me]] += 1
        theirs = ctl[TAG[other] + (self.seq & 1)]
        if theirs != tag:
            raise ExecutionError(f"two-process mode: rank {me} is at step {self.step} phase {self.phase} while "
                                 f"rank {other} is at step {theirs >> 16} phase {theirs & 0xFFFF} "
                                 "(the two processes' control flow differs)")


class TwoProcesses:
    """A program's shared memory, its rank 1 process and the runs (see the module docstring)."""

    def __init__(self, program):
        self._program = weakref.ref(program)  # the program holds this object: no cycle
        self.lanes = plan_lanes(program)  # independent branches, one per process: may re-plan the memory
        plan = program.plan
        sizes = [-(-max(size, 1) // ALIGN) * ALIGN for size in plan.block_sizes]
        self.inputs: dict[int, tuple[tuple[int, ...], np.dtype]] = {}
        for i, arg_type in enumerate(program.arg_types):
            if isinstance(arg_type, ShapedType) and all(d >= 0 for d in arg_type.get_shape()):
                self.inputs[i] = (tuple(arg_type.get_shape()), numpy_dtype(arg_type.get_element_type()))
        input_sizes = [-(-max(int(np.prod(s, dtype=np.int64)) * d.itemsize, 1) // ALIGN) * ALIGN
                       for s, d in self.inputs.values()]
        self.memory = mmap.mmap(-1, CONTROL_BYTES + sum(sizes) + sum(input_sizes))  # MAP_SHARED
        whole = np.frombuffer(self.memory, np.uint8)
        self.bounds = (whole.ctypes.data, whole.ctypes.data + whole.nbytes)
        self.ctl = memoryview(self.memory)[:MESSAGE].cast("q")
        offset, blocks = CONTROL_BYTES, []
        for size, used in zip(sizes, plan.block_sizes, strict=True):
            blocks.append(whole[offset:offset + max(used, 1)])
            offset += size
        self.input_arrays: dict[int, np.ndarray] = {}
        for (i, (shape, dtype)), size in zip(self.inputs.items(), input_sizes, strict=True):
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            self.input_arrays[i] = whole[offset:offset + nbytes].view(dtype).reshape(shape)
            offset += size
        # The planned arrays move into the shared blocks; bindings and cached views follow them.
        plan.place(blocks)
        program._planned[:] = plan.arrays
        program._bound = [None] * len(program.slots)
        program.schedule.bind(program.steps, program._bound)
        self.pid: int | None = None
        self.fd: int | None = None
        self.runs = 0
        self.woken = 0
        self.spmd_steps: list[int] = []
        self.body: list[int] = program.schedule.body
        """Rank 0's steps: the schedule's body, each region of lanes one step (runtime/parallel/spmd_lanes.py)."""
        self.expected: dict[int, tuple] = {}
        self.rank = Rank(self, 0)
        self.starvation = Starvation()
        self.lock = threading.Lock()
        self._finalizer = None

    @property
    def program(self):
        return self._program()

    # --- rank 0 ---------------------------------------------------------------------------------

    def run(self, env: list) -> None:
        with self.lock:  # one run at a time (calls from several threads take turns)
            self._run(env)

    def _run(self, env: list) -> None:
        program = self.program
        n_args = len(program.arg_types)
        args = env[:n_args]
        env[:] = program._bound  # the bindings in shared memory (moved there after `env` was made)
        env[:n_args] = args
        for i, array in self.input_arrays.items():
            np.copyto(array, env[i])
            env[i] = array
        if self.pid is None:
            self._start(env)
            return
        self.runs += 1
        k = self.runs
        ctl, rank = self.ctl, self.rank
        ctl[RUN] = k
        self.wake()
        rank.run, rank.seq = k, 0
        spmd, steps = self.spmd_flags, program.steps
        threads.spmd.rank = rank
        try:
            with threads.split_blas_threads():
                threads._split_threads[-1] = 2
                for index in self.body:
                    rank.step, rank.step_spmd, rank.phase = index, spmd[index], 0
                    steps[index](env)
                rank.step, rank.step_spmd = -1, False
                if ctl[DONE] < k:  # rank 1 has finished (an error it hit after its last phase is raised here)
                    self.wait(rank, DONE, k)
        except BaseException:
            self._abort(k)
            raise
        finally:
            threads.spmd.rank = None
        if CHECK_BINDINGS:
            self._check_bindings(env)

    def stats(self) -> dict[str, int]:
        """Since the last call (or the fork): per rank, ns waited at barriers and how many waits;
        ns rank 0 spent alone on the steps both run (`benchmarks/split_profile.py --processes`)."""
        ctl = self.ctl
        slots = {"rank 0 waited ns": WAITED[0], "rank 0 waits": WAITS[0], "rank 1 waited ns": WAITED[1],
                 "rank 1 waits": WAITS[1], "rank 0 alone ns": ALONE}
        values = {name: ctl[slot] for name, slot in slots.items()}
        for slot in slots.values():
            ctl[slot] = 0
        return values

    def wait(self, rank: Rank, index: int, value: int) -> None:
        """Spin until control slot `index` reaches `value`: `SPIN_S`, then yielding, then naps;
        meanwhile rank 0 watches for rank 1's error or exit, rank 1 for an abort or a lost parent."""
        ctl, first = self.ctl, rank.rank == 0
        start = last_check = time.perf_counter()
        n = 0
        while ctl[index] < value:
            n += 1
            if n & 63:
                continue
            if first and ctl[ERROR_RUN] == rank.run:
                self._raise_rank1_error()
            if not first and ctl[ABORT] >= rank.run:
                raise _Abandon
            now = time.perf_counter()
            if now - last_check > CHECK_S:
                last_check = now
                (self._check_rank1 if first else self._check_rank0)(rank)
            if now - start > YIELD_S:
                time.sleep(NAP_S)
            elif now - start > SPIN_S:
                os.sched_yield()
        if first and ctl[ERROR_RUN] == rank.run:
            self._raise_rank1_error()

    def _check_rank1(self, rank: Rank) -> None:
        """On rank 0, in a long wait: rank 1's error, rank 1 gone, rank 1 asleep."""
        if self.ctl[ERROR_RUN] == rank.run:
            self._raise_rank1_error()
        self.wake()
        if self.pid is not None and os.waitpid(self.pid, os.WNOHANG)[0]:
            pid = self.pid
            self._lost()
            raise ExecutionError(f"two-process mode: the second process (pid {pid}) exited during a run")

    def _raise_rank1_error(self):
        ctl = self.ctl
        message = bytes(self.memory[MESSAGE:MESSAGE + ctl[ERROR_LEN]]).decode(errors="replace")
        raise ExecutionError(f"two-process mode: step {ctl[ERROR_STEP]} failed in the second process "
                             f"(pid {self.pid}): {message}")

    def wake(self) -> None:
        """Write to rank 1's pipe if it went to sleep (once per sleep)."""
        asleep = self.ctl[ASLEEP]
        if asleep and asleep != self.woken and self.fd is not None:
            self.woken = asleep
            try:
                os.write(self.fd, b"w")
            except (BlockingIOError, BrokenPipeError):
                pass

    def _abort(self, k: int) -> None:
        """After an exception on rank 0: stop rank 1's run k and wait until it has left it."""
        self.ctl[ABORT] = k
        while self.pid is not None and self.ctl[DONE] < k:
            self.wake()
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                self._lost()
                break
            time.sleep(NAP_S)

    def _start(self, env: list) -> None:
        """The first run, on rank 0 alone (worker threads as in "split" mode), then the fork: rank 1
        inherits that run's bindings."""
        program = self.program
        with threads.split_blas_threads():
            program.schedule.run(program.steps, env)
        self.spmd_steps = spmd_steps(program, env, self.bounds)
        self.body, self.spmd_steps = lane_phases(program, self.lanes, env, self.spmd_steps,
                                                 shared_slots(program, env, self.bounds))
        self.spmd_flags = [False] * len(program.steps)
        for index in self.spmd_steps:
            self.spmd_flags[index] = True
            access = program.accesses[index]
            for s in access.reads | access.binds | access.writes:
                value = env[s]
                if isinstance(value, np.ndarray):
                    self.expected[s] = (value.__array_interface__["data"][0], value.shape, value.strides)
        self._fork(env)

    def _check_bindings(self, env: list) -> None:
        for s, (address, shape, strides) in self.expected.items():
            value = env[s]
            if (value.__array_interface__["data"][0], value.shape, value.strides) != (address, shape, strides):
                raise ExecutionError(f"two-process mode: slot {s} is bound to another array than in the first run")

    def _fork(self, env: list) -> None:
        read_end, write_end = os.pipe()
        parent = os.getpid()
        ctl = self.ctl
        ctl[DONE] = ctl[ABORT] = self.runs  # rank 1 starts after the runs so far
        ctl[QUIT] = ctl[ASLEEP] = 0
        # No gc.collect() first: a full collection of a large heap (a test session, a server holding
        # many programs) took seconds per fork; freezing alone keeps rank 1's collector off the heap.
        gc.freeze()  # rank 1's collector then leaves the inherited heap alone (no copy-on-write churn)
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(write_end)
                for fd in _open_fds:
                    os.close(fd)
                _open_fds.clear()
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle (the
                # forking thread is the child's main thread)
                self._serve(env, read_end, parent)
                status = 0
            finally:
                os._exit(status)
        gc.unfreeze()
        os.close(read_end)
        os.set_blocking(write_end, False)
        self.pid, self.fd = pid, write_end
        _open_fds.add(write_end)
        self._finalizer = weakref.finalize(self.program, _stop, self.ctl, pid, write_end)

    def _lost(self) -> None:
        """Rank 1 exited by itself (and was reaped): the next call forks a new one."""
        self._finalizer.detach()
        _open_fds.discard(self.fd)
        os.close(self.fd)
        self.pid = self.fd = None

    def close(self) -> None:
        """Stop rank 1 (the next call forks a new one)."""
        if self._finalizer is not None:
            self._finalizer()
        self.pid = self.fd = None

    # --- rank 1 ---------------------------------------------------------------------------------

    def _serve(self, env: list, read_end: int, parent: int) -> None:
        """Rank 1's life: wait for a run, run the steps both ranks run, report, again."""
        threads.set_blas_threads(1)
        threads._split_threads[:] = [2]
        ctl, rank, steps = self.ctl, Rank(self, 1), self.program.steps
        last = self.runs
        self._parent, self._read_end, self._sleeps = parent, read_end, 0
        while True:
            k = self._next_run(last, rank)
            if k is None:
                return
            last = rank.run = k
            rank.seq = 0
            threads.spmd.rank = rank
            try:
                for index in self.spmd_steps:
                    rank.step, rank.step_spmd, rank.phase = index, True, 0
                    steps[index](env)
            except _Abandon:
                pass
            except BaseException as error:  # noqa: BLE001 (reported to rank 0)
                text = f"{type(error).__name__}: {error}".encode()[:CONTROL_BYTES - MESSAGE]
                self.memory[MESSAGE:MESSAGE + len(text)] = text
                ctl[ERROR_LEN], ctl[ERROR_STEP] = len(text), rank.step
                ctl[ERROR_RUN] = k
            finally:
                threads.spmd.rank = None
            ctl[DONE] = k

    def _check_rank0(self, rank: Rank) -> None:
        """On rank 1, in a long wait: the caller gone, the program closed, the run aborted."""
        if self.ctl[QUIT] or os.getppid() != self._parent:
            os._exit(0)
        if self.ctl[ABORT] >= rank.run:
            raise _Abandon

    def _next_run(self, last: int, rank: Rank) -> int | None:
        """The next run's number once rank 0 starts it: spin, then yield, then block on the pipe."""
        ctl = self.ctl
        start = last_check = time.perf_counter()
        n = 0
        while ctl[RUN] <= last:
            n += 1
            if n & 63:
                continue
            now = time.perf_counter()
            if now - last_check > CHECK_S:
                last_check = now
                if ctl[QUIT] or os.getppid() != self._parent:
                    return None
            if now - start > IDLE_SPIN_S:
                break
            if now - start > SPIN_S:
                os.sched_yield()
        while ctl[RUN] <= last:
            self._sleeps += 1
            ctl[ASLEEP] = self._sleeps
            while ctl[RUN] <= last:
                ready, _, _ = select.select([self._read_end], [], [], 1.0)
                if ready and not os.read(self._read_end, 4096):
                    return None  # end of file: the caller closed the program or is gone
                if ctl[QUIT] or os.getppid() != self._parent:
                    return None
            ctl[ASLEEP] = 0
        return ctl[RUN]


def _stop(ctl, pid: int, fd: int) -> None:
    """Make rank 1 `pid` leave and reap it (a program closed or collected, or the interpreter exiting)."""
    ctl[QUIT] = 1
    _open_fds.discard(fd)
    try:
        os.close(fd)  # end of file for a sleeping rank 1
    except OSError:
        pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        time.sleep(1e-3)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
