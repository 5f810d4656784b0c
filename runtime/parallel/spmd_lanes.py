"""Independent branches on the two processes of the two-process mode (runtime/parallel/spmd.py), one each.

In the two-process mode every step both processes run splits itself: each process computes half of
each convolution. For the small convolutions of a branchy model's later stages (Inception's 14x14
and 7x7 branches) half a GEMM runs well below the whole one's speed, and each split costs two
barriers. Where a region of the program is independent branches (an Inception module's four: the
1x1, the two 3x3 towers, the pool projection), this runs whole branches instead: one process
computes some branches, the other the rest, each step whole, in one phase between two barriers.

Planned when the mode starts, before it moves the memory plan into shared memory (`plan_lanes`):

- dependencies between the body's steps from the data they touch: a slot one binds and another
  reads, a planned buffer one writes and another reads or writes (`data_dependencies`; buffers, not
  the plan's blocks, so branches whose buffers the plan made share a block are independent, and
  branches written into disjoint slices of one concatenation too);
- regions between steps every costly step depends on or is depended on by (as runtime/executor/schedule.py
  cuts them); in a region, the connected components of its dependencies are the branches;
- a region whose branches can be dealt onto two lanes whose longer one is estimated
  (`StepAccess.cost_ns`) at most `MAX_LANE_SHARE` of the region is planned as lanes, and the
  memory is planned again keeping every buffer used within such a region apart (`plan_memory`'s
  `hold`), and with it everything made from the plan (`LinalgProgram.use_plan`: the pads' kept
  borders, the thread schedule).

After the first run (whose bindings the second process inherits), each such region whose steps both
processes may run (`spmd_steps`), or only bind a view of a shared array, and whose two lanes
touched no common memory in that run (`np.shares_memory` of the bound arrays) becomes one
`LanePhase` step (`lane_phases`).

A `LanePhase` runs as one phase: rank 0 runs lane 0's steps and every binding, rank 1 lane 1's
steps, each step whole (the split thread count is 1 inside it). Rank 1's environment keeps the
first run's bindings (it never resets it); rank 0 binds, before the phase, the slots lane 1's
steps bind, to the first run's arrays: a planned program binds the same arrays on every run, which
the two-process mode already relies on (`spmd.CHECK_BINDINGS` checks it in tests).
"""

from __future__ import annotations

import numpy as np

from xrelay.runtime.parallel import threads
from xrelay.runtime.executor.memory_plan import plan_memory
from xrelay.runtime.executor.schedule import StepAccess

MAX_LANE_SHARE = 0.85
"""A region runs as lanes when its longer lane is estimated at most this share of the region's time
(`StepAccess.cost_ns`). Splitting each step measured worse even for uneven lanes: Inception v2
(benchmarks/change_ab.py --model onnx:inception_v2 --threading processes --both, 2 threads, 20
rounds), every region laned (its longest lane 0.51-0.81 of the region) against only those up to
0.55: 0.976; against none: 0.851."""
STEP_SPLIT_NS = 600_000
"""A region runs as lanes only when its longer lane is estimated at most this much per costly step
(above `CHEAP_NS`) longer than half the region: what a step run whole in a lane saves against
splitting itself (two barriers, the parts' imbalance, half a small GEMM's lower speed) must pay for
the lanes' imbalance. Per region, rank 0's time as lanes against the same steps split (alternating,
2 threads, 30 rounds; the threshold in this unit is the longer lane's excess over half the region
per costly step): ResNet-50's (ONNX) four downsampling blocks, 4 costly steps, excess 894-1186 us:
1.232, 1.176, 1.047, 1.063; Inception v2's ten, 7-9 costly steps, excess at most 390 us (longer lane
0.50-0.81): 0.774-0.962; Inception v1's nine, at most 172 us: 0.757-0.890 but its two 28x28
regions (141, 172 us) 1.022, 1.014; ShuffleNet's two, 15 us: 1.070, 0.839."""
MIN_REGION_NS = 200_000
"""Regions estimated shorter than this keep their steps split (a lane phase's barriers and Python
are not worth it)."""
CHEAP_NS = 1_000
"""Steps estimated at most this long (views, bindings) do not keep a region from being cut."""


def _chains(plan) -> list[frozenset]:
    """Per planned buffer, itself and the buffers it is placed in (`MemoryPlan.parent`, transitively)."""
    chains = []
    for k in range(len(plan.buffers)):
        chain, j = {k}, k
        while j in plan.parent:
            j = plan.parent[j][0]
            chain.add(j)
        chains.append(frozenset(chain))
    return chains


def data_dependencies(program, body: list[int]) -> list[set[int]]:
    """Per position in `body`, the positions of earlier steps it must run after whatever memory the
    plan gives each buffer: one binds a slot it reads, or one writes a buffer it reads or writes,
    or one reads a buffer it writes; a step without a `StepAccess` (what it touches is not known)
    depends on every earlier one and every later one on it, so no region holds it beside anything.
    Buffers conflict when one is the other or holds it (a buffer computed into a slice of a
    concatenation conflicts with the concatenation, not with its sibling slices); a slot the plan
    does not own (a constant, an argument) only with itself."""
    storage, chains = program.memory.storage, _chains(program.plan)

    def held(slots) -> list[tuple[object, frozenset]]:
        return [(storage[s], chains[storage[s]]) if s in storage else (("slot", s), frozenset({("slot", s)}))
                for s in slots]

    def meets(a: list, b: list) -> bool:
        return any(x in chain_y or y in chain_x for x, chain_x in a for y, chain_y in b)

    touched = []
    for index in body:
        access = program.accesses.get(index)
        touched.append(None if access is None
                       else (access.binds, access.reads, held(access.reads), held(access.writes)))
    deps: list[set[int]] = []
    for j, mine in enumerate(touched):
        if mine is None:  # what it touches is not known: after every earlier step, before every later one
            deps.append(set(range(j)))
            continue
        _, read_slots, reads, writes = mine
        deps.append({i for i, theirs in enumerate(touched[:j])
                     if theirs is None or theirs[0] & read_slots or meets(theirs[3], reads)
                     or meets(theirs[3], writes) or meets(theirs[2], writes)})
    return deps


def regions(deps: list[set[int]], costs: list[float]) -> list[list[int]]:
    """The positions between cuts, as runtime/executor/schedule.py cuts a program: a position every costly
    position (estimated above `CHEAP_NS`, depending on some other) depends on or is depended on by
    is a cut."""
    n = len(deps)
    ancestors, descendants = [0] * n, [0] * n
    for k in range(n):
        for d in deps[k]:
            ancestors[k] |= ancestors[d] | (1 << d)
    for k in range(n - 1, -1, -1):
        for d in deps[k]:
            descendants[d] |= descendants[k] | (1 << k)
    # A step that depends on none (a fill reading only constants) may run anywhere before its users:
    # it does not keep the others from being cut.
    costly = sum(1 << k for k in range(n) if costs[k] > CHEAP_NS and ancestors[k])
    found, region = [], []
    for k in range(n):
        if costly & ~(ancestors[k] | descendants[k] | (1 << k)) == 0:
            if region:
                found.append(region)
            region = []
        else:
            region.append(k)
    if region:
        found.append(region)
    return found


def branches(region: list[int], deps: list[set[int]]) -> list[list[int]]:
    """The connected components of `region`'s dependencies among its own positions, in order."""
    root = {k: k for k in region}

    def find(k: int) -> int:
        while root[k] != k:
            root[k] = root[root[k]]
            k = root[k]
        return k

    for k in region:
        for d in deps[k]:
            if d in root:
                root[find(k)] = find(d)
    found: dict[int, list[int]] = {}
    for k in region:
        found.setdefault(find(k), []).append(k)
    return list(found.values())


def two_lanes(parts: list[list[int]], costs: list[float]) -> tuple[list[int], list[int]] | None:
    """`parts` (branches) dealt onto two lanes, longest first each to the shorter lane, the longer
    lane first, when it is estimated at most `MAX_LANE_SHARE` of their time and at most
    `STEP_SPLIT_NS` per costly step longer than half their time; else None."""
    weight = [sum(costs[k] for k in part) for part in parts]
    total = sum(weight)
    if total < MIN_REGION_NS or len(parts) < 2:
        return None
    lanes: tuple[list[int], list[int]] = ([], [])
    load = [0.0, 0.0]
    for w, part in sorted(zip(weight, parts), key=lambda wp: -wp[0]):
        lane = 0 if load[0] <= load[1] else 1
        lanes[lane].extend(part)
        load[lane] += w
    costly = sum(1 for part in parts for k in part if costs[k] > CHEAP_NS)
    if max(load) > MAX_LANE_SHARE * total or max(load) - total / 2 > STEP_SPLIT_NS * costly:
        return None
    # The longer lane first (rank 0's): rank 0 waiting at barriers is what runtime/parallel/spmd_fallback.py
    # reads as starvation, rank 1 waiting is not.
    heavy = 0 if load[0] >= load[1] else 1
    return sorted(lanes[heavy]), sorted(lanes[1 - heavy])


def planned_lanes(program) -> list[tuple[list[int], list[int]]]:
    """The program's regions of independent branches worth running one lane per process, as two
    lists of step indices each (from the data dependencies: valid under any memory plan that
    keeps each region's buffers apart, `lane_holds`)."""
    if program.schedule is None or program.plan is None:
        return []
    body = program.schedule.body
    deps = data_dependencies(program, body)
    costs = [program.accesses[i].cost_ns if i in program.accesses else 0.0 for i in body]
    found = []
    for region in regions(deps, costs):
        lanes = two_lanes(branches(region, deps), costs)
        if lanes is not None:
            found.append(tuple([body[k] for k in lane] for lane in lanes))
    return found


def plan_lanes(program) -> list[tuple[list[int], list[int]]]:
    """`planned_lanes`, with the program's memory planned anew so that no two buffers used within
    one region share memory (`plan_memory`'s `hold`): before the two-process mode moves the plan
    into shared memory."""
    lanes = planned_lanes(program)
    if lanes:
        plan = plan_memory(program.memory, len(program.steps), program.result_slots,
                           hold=[(min(a + b), max(a + b)) for a, b in lanes])
        if plan is None:
            return []
        # Everything made from the plan before (the schedule's blocks, the pads' kept borders) is
        # made again for the new blocks.
        program.use_plan(plan)
    return lanes


def _memory(value) -> tuple[int, int, np.ndarray] | None:
    if not isinstance(value, np.ndarray) or value.size == 0:
        return None
    lo, hi = np.lib.array_utils.byte_bounds(value)
    return lo, hi, value


def _overlap(a: list, b: list) -> bool:
    """Whether any array of `a` shares memory with any of `b` (each a list of `_memory` triples)."""
    for lo, hi, x in a:
        for lo2, hi2, y in b:
            if lo < hi2 and lo2 < hi:
                try:
                    if np.shares_memory(x, y, max_work=100_000):
                        return True
                except np.exceptions.TooHardError:
                    return True
    return False


class LanePhase:
    """A region's two lanes as one step both processes run (see the module docstring)."""

    spmd = True

    def __init__(self, steps: list, lanes: tuple[list[int], list[int]], rebind: list[tuple[int, object]]):
        self.steps, self.lanes, self.rebind = steps, lanes, rebind

    def _lane(self, k: int, env: list) -> None:
        counts = threads._split_threads
        saved = counts[-1]
        counts[-1] = 1  # each step whole on this process
        try:
            steps = self.steps
            for index in self.lanes[k]:
                steps[index](env)
        finally:
            counts[-1] = saved

    def __call__(self, env: list) -> None:
        rank = threads.spmd.rank
        if rank is None:  # not in a two-process run: the steps in order
            for index in sorted(self.lanes[0] + self.lanes[1]):
                self.steps[index](env)
            return
        if rank.rank == 0:
            for slot, value in self.rebind:
                env[slot] = value
        threads.run_split(2, [lambda: self._lane(0, env), lambda: self._lane(1, env)])


def lane_phases(program, lanes: list[tuple[list[int], list[int]]], env: list, chosen: list[int],
                shared) -> tuple[list[int], list[int]]:
    """After the first run in shared memory (`env` its bindings, `chosen` the steps both processes
    run, `shared(slot)` from runtime/parallel/spmd_steps.py): each region of `lanes` whose steps both
    processes may run (or that only bind a shared array) and whose lanes touch no common memory in
    that run becomes a `LanePhase` appended to `program.steps`. Returns rank 0's body and the steps
    both processes run, with each such region's steps replaced by its phase (at its first step)."""
    body, phases = list(program.schedule.body), set()
    chosen_set = set(chosen)
    for lane0, lane1 in lanes:
        steps = set(lane0) | set(lane1)
        if not steps <= set(body):
            continue
        first = min(steps)
        between = [i for i in body if first <= i <= max(steps) and i not in steps]
        if between:
            continue  # a step of another region in between: the lanes would run it out of order
        # Steps that only bind a shared array (views) run on rank 0, whichever branch they are in:
        # rank 1's environment keeps the first run's bindings.
        bindings = [i for i in steps if i not in chosen_set]
        if any(program.accesses.get(i) is None or program.accesses[i].writes
               or not all(shared(s) for s in program.accesses[i].binds) for i in bindings):
            continue
        lane0 = sorted(set(lane0) | set(bindings))
        lane1 = [i for i in lane1 if i in chosen_set]

        def memory(indices) -> tuple[list, list]:
            reads, writes = [], []
            for i in indices:
                access = program.accesses[i]
                reads += [m for s in access.reads if (m := _memory(env[s])) is not None]
                writes += [m for s in access.writes if (m := _memory(env[s])) is not None]
            return reads, writes

        # (a binding reads no data: only the computing steps' memory counts)
        (r0, w0), (r1, w1) = memory([i for i in lane0 if i in chosen_set]), memory(lane1)
        if _overlap(w0, r1 + w1) or _overlap(w1, r0):
            continue
        rebind = [(s, env[s]) for i in lane1 for s in program.accesses[i].binds]
        program.steps.append(LanePhase(program.steps, (lane0, lane1), rebind))
        phase = len(program.steps) - 1
        program.accesses[phase] = access = StepAccess()
        for i in steps:
            access.merge(program.accesses[i])
        phases.add(phase)
        body = [phase if i == first else i for i in body if i not in steps or i == first]
    both = [i for i in body if i in chosen_set or i in phases]
    return body, both
