"""ebssim metrics: deterministic CloudWatch AWS/EBS series from each volume's workload.

Model (documented in docs/TESTING.md, "Metrics"):
  - A volume's *demand* (read/write IOPS and MiB/s) comes from its scenario `workload`
    and is constant within each 5-minute slot (SLOT_S).  Patterns: steady, diurnal
    (sinusoid over the UTC day), bursty (a 15-minute burst at 3x each hour, 1/3 of the
    rest of the time), idle (no I/O).  `active_from`/`active_until` bound the load.
  - EBS counts I/O in 256 KiB units; an op of avg size s KiB costs ceil(s/256) units.
  - gp2 below 1,000 GiB has a credit bucket of 5.4 M units, refilled at the baseline
    (3 IOPS/GiB, min 100), spent while delivering up to 3,000 IOPS; empty -> baseline.
    Within a slot the bucket is solved exactly (the instant it empties is computed),
    so a 100 GiB gp2 under 3,000 IOPS demand starting full falls to 300 IOPS at
    5.4e6 / (3000 - 300) = 2,000 s.
  - Other types deliver min(demand, their IOPS cap) with a throughput cap
    (gp3: provisioned; gp2: 128 MiB/s up to 170 GiB, 250 above; io1/io2 min(1000, iops/4) ...).
  - The performance configuration follows the modification history: the original until
    a modification completes, the target afterwards (optimizing keeps the source's
    performance, which AWS documents as the lower bound).
  - History exists from the later of the volume's create_time and 63 days before the
    scenario start; the bucket starts there at the volume's `burst_balance` percent
    (default 100).  Unattached volumes report no data.  Only whole periods that ended
    before the sim clock's "now" are returned.

Bucket levels at day boundaries are cached per volume so long look-backs are computed
once; `forget(volume_id)` drops the cache when a new modification changes the future.

Speed (issue 14: 100,000-volume live benchmarks).  `series_columns` answers a query whose
start and period are whole 5-minute slots (every query ebsmigrate makes) without working
point by point: a volume's slots are solved once per request range (`_solved`, an LRU of
SOLVED_CACHE volumes) into *templates*, the distinct solved slots (a steady volume whose
bucket stays full has one), and a point's value is computed once per distinct run of
templates by the very same `_point` code on copies of those templates placed at t = 0.
Offsets within a slot are whole seconds, exact in floating point at any t, so the values are
bit-for-bit those of the point-by-point path, which still answers every other query and is
the reference the self-test (test_cloudwatch.FastPath) compares against.
"""

import collections
import hashlib
import math

SLOT_S = 300.0
DAY_SLOTS = int(86400 / SLOT_S)
HISTORY_S = 63 * 86400.0
BUCKET = 5.4e6
BURST_IOPS = 3000.0
UNIT_KIB = 256.0
BASE_LATENCY_S = 0.0006

METRICS = ("VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes", "VolumeWriteBytes",
           "BurstBalance", "VolumeQueueLength", "VolumeIOPSExceededCheck",
           "VolumeThroughputExceededCheck", "VolumeIdleTime", "VolumeTotalReadTime",
           "VolumeTotalWriteTime")


def gp2_baseline(size):
    return float(min(16000, max(100, 3 * int(size))))


def caps(config, bucket_nonempty=True):
    """(iops cap, MiB/s cap, bursting) for a configuration."""
    t, size, iops = config["type"], int(config["size"]), config.get("iops")
    if t == "gp2":
        base = gp2_baseline(size)
        bursting = size < 1000
        if size <= 170:
            tput = 128.0
        elif size < 334:
            tput = 250.0 if bucket_nonempty else 128.0
        else:
            tput = 250.0
        return base, tput, bursting
    if t == "gp3":
        return float(iops or 3000), float(config.get("throughput") or 125), False
    if t in ("io1", "io2"):
        return float(iops or 100), float(min(4000 if t == "io2" else 1000, (iops or 100) / 4.0)), False
    if t == "st1":
        tib = size / 1024.0
        return 500.0, float(min(500, max(40, 250 * tib))), False
    if t == "sc1":
        tib = size / 1024.0
        return 250.0, float(min(250, max(12, 80 * tib))), False
    return 200.0, 90.0, False  # standard (magnetic)


def _hash_frac(text):
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16) / float(0xFFFFFFFF)


class Workload:
    """Demand of one volume as a function of slot start time."""

    def __init__(self, vid, spec, parse_time):
        spec = spec or {}
        self.read_iops = float(spec.get("read_iops", 0) or 0)
        self.write_iops = float(spec.get("write_iops", 0) or 0)
        self.read_mibps = float(spec.get("read_mibps", 0) or 0)
        self.write_mibps = float(spec.get("write_mibps", 0) or 0)
        self.pattern = spec.get("pattern", "steady" if (self.read_iops or self.write_iops) else "idle")
        self.queue_depth = spec.get("queue_depth")
        self.active_from = parse_time(spec.get("active_from")) if spec.get("active_from") else None
        self.active_until = parse_time(spec.get("active_until")) if spec.get("active_until") else None
        self.phase = _hash_frac(vid)
        iops = self.read_iops + self.write_iops
        mib = self.read_mibps + self.write_mibps
        self.total_iops = iops
        self.total_mibps = mib
        self.read_frac = self.read_iops / iops if iops else 0.5
        self.read_bytes_frac = self.read_mibps / mib if mib else self.read_frac
        avg_kib = (mib * 1024.0 / iops) if iops else 4.0
        self.units_per_op = max(1.0, math.ceil(avg_kib / UNIT_KIB - 1e-9))

    def factor(self, t):
        """Demand multiplier for the slot starting at t."""
        if self.active_from is not None and t + SLOT_S <= self.active_from:
            return 0.0
        if self.active_until is not None and t >= self.active_until:
            return 0.0
        p = self.pattern
        if p == "idle" or not self.total_iops:
            return 0.0
        if p == "diurnal":
            day = ((t / 86400.0) + self.phase) % 1.0
            return max(0.0, 1.0 + 0.6 * math.sin(2 * math.pi * day))
        if p == "bursty":
            offset = int(self.phase * 45) * 60.0  # burst start within the hour
            pos = t % 3600.0
            return 3.0 if offset <= pos < offset + 900.0 else 1.0 / 3.0
        return 1.0

    def factors(self, t0, n):
        """(ts, [factor(t) for t in ts]) for the n slots from t0 (a whole number of seconds,
        so t0 + k * SLOT_S is exactly the t slots() reaches by repeated addition), without a
        method call per slot; the same expressions, so the same floats."""
        ts = [t0 + k * SLOT_S for k in range(n)]
        if self.active_from is not None or self.active_until is not None:
            return ts, [self.factor(t) for t in ts]
        p = self.pattern
        if p == "idle" or not self.total_iops:
            return ts, [0.0] * n
        if p == "diurnal":
            ph, sin, two_pi = self.phase, math.sin, 2 * math.pi
            return ts, [max(0.0, 1.0 + 0.6 * sin(two_pi * (((t / 86400.0) + ph) % 1.0))) for t in ts]
        if p == "bursty":
            offset = int(self.phase * 45) * 60.0
            end, low = offset + 900.0, 1.0 / 3.0
            return ts, [3.0 if offset <= t % 3600.0 < end else low for t in ts]
        return ts, [1.0] * n

    def constant(self):
        return self.pattern in ("steady", "idle") or not self.total_iops

    def peak_factor(self):
        return {"diurnal": 1.6, "bursty": 3.0}.get(self.pattern, 1.0 if self.total_iops else 0.0)


class Slot:
    """One solved slot: delivery rate r1 (units/s) for [0, te), r2 after; bucket b0..b1."""
    __slots__ = ("t", "length", "demand_ops", "units", "r1", "te", "r2", "b0", "b1", "base",
                 "refill", "tput_demand", "tput_cap", "config_type", "bursting", "factor")


def _demand_slot(t, f, cfg, burst, tput_cap, w):
    """A slot at t of a workload w at demand factor f under configuration cfg, not solved yet."""
    s = Slot()
    s.t = t
    s.length = SLOT_S
    s.factor = f
    s.config_type = cfg["type"]
    s.bursting = burst
    s.tput_cap = tput_cap
    s.tput_demand = w.total_mibps * f
    s.units = w.units_per_op
    s.demand_ops = w.total_iops * f
    return s


def _solve(slot, demand_units, cap, base, burst, bucket_start, length):
    """Fill r1/te/r2/b0/b1 for constant demand over `length` seconds."""
    slot.b0 = bucket_start
    slot.base = base
    if not burst:
        r = min(demand_units, cap)
        slot.r1 = slot.r2 = r
        slot.te = length
        slot.b1 = bucket_start
        slot.refill = 0.0
        return
    if demand_units <= base:
        slot.r1 = slot.r2 = demand_units
        slot.te = length
        slot.refill = base - demand_units
        slot.b1 = min(BUCKET, bucket_start + slot.refill * length)
        return
    hi = min(demand_units, BURST_IOPS)
    drain = hi - base
    slot.refill = -drain
    if bucket_start <= 0:
        slot.r1 = slot.r2 = base
        slot.te = length
        slot.refill = 0.0
        slot.b1 = 0.0
        return
    te = bucket_start / drain
    slot.r1 = hi
    if te >= length:
        slot.te = length
        slot.r2 = hi
        slot.b1 = bucket_start - drain * length
    else:
        slot.te = te
        slot.r2 = base
        slot.b1 = 0.0


def _overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def _bucket_integral(s, x, y):
    """Integral of the bucket level over [x, y) (offsets within slot s)."""
    if y <= x:
        return 0.0
    k = s.refill
    total = 0.0
    # phase 1: [0, te) linear with slope k clipped to [0, BUCKET]; phase 2: 0 (emptied)
    p1x, p1y = x, min(y, s.te)
    if p1y > p1x:
        if k >= 0:
            tc = (BUCKET - s.b0) / k if k > 0 else float("inf")
            lin_end = min(p1y, max(p1x, tc))
            if lin_end > p1x:
                total += (s.b0 + k * (p1x + lin_end) / 2.0) * (lin_end - p1x)
            if p1y > lin_end:
                total += BUCKET * (p1y - lin_end)
        else:
            total += (s.b0 + k * (p1x + p1y) / 2.0) * (p1y - p1x)
    return max(0.0, total)


def _one_slot_ops(frac_of):
    """Sum of an operations/bytes metric over one whole slot: what value() and _point() compute
    for x = 0, y = SLOT_S (the same operations in the same order), without their dispatch."""
    def point(s, w):
        units = s.r1 * _overlap(0.0, SLOT_S, 0, s.te) + s.r2 * _overlap(0.0, SLOT_S, s.te, s.length)
        ops = units / s.units
        return 0.0 + frac_of(ops, w)
    return point


def _bytes_per_op(w):
    return (w.total_mibps * 1048576.0 / w.total_iops) if w.total_iops else 0.0


def _one_slot_min_burst(s, w):
    """BurstBalance Minimum over one whole slot: the least of its five per-minute averages."""
    if s.bursting:
        return min((0.0 + _bucket_integral(s, x, x + 60.0) / BUCKET * 100.0) / (0.0 + ((x + 60.0) - x))
                   for x in (0.0, 60.0, 120.0, 180.0, 240.0))
    if s.config_type in ("gp2", "st1", "sc1"):
        return (0.0 + 100.0 * 60.0) / (0.0 + 60.0)
    return None


_ONE_SLOT_POINT = {
    ("VolumeReadOps", "Sum"): _one_slot_ops(lambda ops, w: ops * w.read_frac),
    ("VolumeWriteOps", "Sum"): _one_slot_ops(lambda ops, w: ops * (1 - w.read_frac)),
    ("VolumeReadBytes", "Sum"): _one_slot_ops(lambda ops, w: ops * _bytes_per_op(w) * w.read_bytes_frac),
    ("VolumeWriteBytes", "Sum"): _one_slot_ops(lambda ops, w: ops * _bytes_per_op(w) * (1 - w.read_bytes_frac)),
    ("BurstBalance", "Minimum"): _one_slot_min_burst,
}

SOLVED_CACHE = 64   # volumes whose solved slots are kept (a GetMetricData batch has <= 100)


class _Solved:
    """One volume's solved slots from `first`: tids[k] indexes `templates` (Slots at t = 0);
    points[(metric, stat, period)] maps a run of template ids to the point's value."""
    __slots__ = ("first", "tids", "templates", "points")

    def __init__(self, first, tids, templates):
        self.first = first
        self.tids = tids
        self.templates = templates
        self.points = {}


class MetricsModel:
    def __init__(self, sim):
        self.sim = sim
        self._workloads = {}
        self._checkpoints = {}   # volume id -> {slot index: bucket level}
        self._solved_lru = collections.OrderedDict()  # LRU: (vid, first, last, timeline) -> _Solved

    def forget(self, volume_id):
        self._checkpoints.pop(volume_id, None)
        for key in [k for k in self._solved_lru if k[0] == volume_id]:
            del self._solved_lru[key]

    def workload(self, vid, vol):
        w = self._workloads.get(vid)
        if w is None:
            from ebssim_core import parse_time
            w = Workload(vid, vol.get("workload"), parse_time)
            self._workloads[vid] = w
        return w

    def origin(self, vol):
        from ebssim_core import parse_time
        created = parse_time(vol.get("create_time")) or (self.sim.clock.start - HISTORY_S)
        start = max(created, self.sim.clock.start - HISTORY_S)
        return math.ceil(start / SLOT_S) * SLOT_S

    def _config_at(self, timeline, t):
        cfg = timeline[0][1]
        for since, c in timeline:
            if since <= t:
                cfg = c
            else:
                break
        return cfg

    def slots(self, vid, t0, t1):
        """Solved slots covering [t0, t1) (clamped to the volume's history)."""
        vol = self.sim.volumes[vid]
        w = self.workload(vid, vol)
        timeline = self.sim.config_timeline(vid)
        origin = self.origin(vol)
        first = max(origin, math.floor(t0 / SLOT_S) * SLOT_S)
        last = math.ceil(t1 / SLOT_S) * SLOT_S
        if first >= last:
            return []
        ever_bursts = any(caps(c)[2] for _, c in timeline)
        if ever_bursts:
            pos, target, bucket, cps = self._resume_point(vid, vol, w, origin, first,
                                                          min(caps(c)[0] for _, c in timeline))
            now_idx = int(self.sim.now() // SLOT_S)
            while pos < target:
                t = pos * SLOT_S
                cfg = self._config_at(timeline, t)
                cap, tput_cap, burst = caps(cfg, bucket > 0)
                units = self._demand_units(w, t, tput_cap)
                s = Slot()
                _solve(s, units, cap, cap, burst, bucket, SLOT_S)
                bucket = s.b1 if burst else BUCKET
                pos += 1
                if pos % DAY_SLOTS == 0 and pos <= now_idx:
                    cps[pos] = bucket
        else:
            bucket = BUCKET
        out = []
        t = first
        while t < last:
            cfg = self._config_at(timeline, t)
            cap, tput_cap, burst = caps(cfg, bucket > 0)
            s = _demand_slot(t, w.factor(t), cfg, burst, tput_cap, w)
            units = self._demand_units(w, t, tput_cap)
            _solve(s, units, cap, cap, burst, bucket if burst else BUCKET, SLOT_S)
            bucket = s.b1 if burst else BUCKET
            out.append(s)
            t += SLOT_S
            if ever_bursts and int(round(t / SLOT_S)) % DAY_SLOTS == 0 and t <= self.sim.now():
                self._checkpoints[vid][int(round(t / SLOT_S))] = bucket
        return out

    def _resume_point(self, vid, vol, w, origin, first, base_min):
        """Where the bucket's history resumes for slots from `first`: (pos, target, bucket,
        checkpoints) - the latest cached day checkpoint at or before `first`, else the volume's
        origin with its starting balance; at `first` at once when the bucket is full and the
        workload's peak never exceeds the smallest baseline (it never drains)."""
        cps = self._checkpoints.setdefault(vid, {})
        target = int(round(first / SLOT_S))
        best = None
        for i in cps:
            if i <= target and (best is None or i > best):
                best = i
        if best is None:
            pos, bucket = int(round(origin / SLOT_S)), BUCKET * float(vol.get("burst_balance", 100.0)) / 100.0
        else:
            pos, bucket = best, cps[best]
        if bucket >= BUCKET and w.total_iops * w.peak_factor() * w.units_per_op <= base_min:
            pos = target
        return pos, target, bucket, cps

    @staticmethod
    def _demand_units(w, t, tput_cap):
        return MetricsModel._demand_units_f(w, w.factor(t), tput_cap)

    @staticmethod
    def _demand_units_f(w, f, tput_cap):
        ops = w.total_iops * f
        mib = w.total_mibps * f
        if mib > tput_cap > 0:
            ops *= tput_cap / mib
        return ops * w.units_per_op


    # ---- fast path: whole slots, solved once per distinct slot

    def _solved(self, vid, first, last):
        """The volume's slots [first, last) as a _Solved (see the module comment); the same
        recurrence as slots(), with each distinct (configuration, bucket state, demand
        factor) solved once."""
        vol = self.sim.volumes[vid]
        timeline = self.sim.config_timeline(vid)
        key = (vid, first, last, repr(timeline))
        hit = self._solved_lru.get(key)
        if hit is not None:
            self._solved_lru.move_to_end(key)
            return hit
        w = self.workload(vid, vol)
        origin = self.origin(vol)
        cfgs = [c for _, c in timeline]
        sinces = [since for since, _ in timeline]
        ever_bursts = any(caps(c)[2] for c in cfgs)
        memo = {}        # (config index, bucket > 0, factor, bucket) -> (template id, next bucket)
        templates = []

        def solve(ci, f, bucket):
            cfg = cfgs[ci]
            cap, tput_cap, burst = caps(cfg, bucket > 0)
            s = _demand_slot(0.0, f, cfg, burst, tput_cap, w)
            units = self._demand_units_f(w, f, tput_cap)
            _solve(s, units, cap, cap, burst, bucket if burst else BUCKET, SLOT_S)
            templates.append(s)
            return len(templates) - 1, (s.b1 if burst else BUCKET)

        def config_index(ci, t):
            # _config_at: the last of the leading entries whose `since` <= t
            while ci + 1 < len(sinces) and sinces[ci + 1] <= t:
                ci += 1
            return ci

        def run(t0, n, bucket, tids, checkpoints):
            """Solves n slots from t0; appends template ids to tids (unless None); stores the
            bucket at each day boundary not after now in checkpoints (as slots() does)."""
            ts, fs = w.factors(t0, n)
            ci = config_index(0, t0)
            nxt_change = sinces[ci + 1] if ci + 1 < len(sinces) else float("inf")
            now = self.sim.now()
            idx0 = int(round(t0 / SLOT_S))       # slot index of t0; slot k ends at idx0 + k + 1
            next_cp = (-(idx0 + 1)) % DAY_SLOTS if checkpoints is not None else n
            add = tids.append if tids is not None else None
            get = memo.get
            for k, t in enumerate(ts):
                if t >= nxt_change:
                    ci = config_index(ci, t)
                    nxt_change = sinces[ci + 1] if ci + 1 < len(sinces) else float("inf")
                f = fs[k]
                mkey = (ci, bucket > 0, f, bucket)
                got = get(mkey)
                if got is None:
                    got = memo[mkey] = solve(ci, f, bucket)
                if add is not None:
                    add(got[0])
                bucket = got[1]
                if k == next_cp:
                    next_cp += DAY_SLOTS
                    idx = idx0 + k + 1
                    # pre-roll: pos <= now's slot index; main loop: the slot's end <= now
                    if (idx <= int(now // SLOT_S)) if tids is None else (t + SLOT_S <= now):
                        checkpoints[idx] = bucket
            return bucket

        if ever_bursts:
            pos, target, bucket, cps = self._resume_point(vid, vol, w, origin, first,
                                                          min(caps(c)[0] for c in cfgs))
            if pos < target:
                bucket = run(pos * SLOT_S, target - pos, bucket, None, cps)
        else:
            bucket = BUCKET
            cps = None
        tids = []
        n = int(round((last - first) / SLOT_S))
        if n > 0:
            run(first, n, bucket, tids, cps)
        solved = _Solved(first, tids, templates)
        self._solved_lru[key] = solved
        if len(self._solved_lru) > SOLVED_CACHE:
            self._solved_lru.popitem(last=False)
        return solved

    def series_columns(self, vid, metric, stat, start, end, period):
        """(timestamps, values) of series(), as two lists."""
        vol = self.sim.volumes.get(vid)
        if vol is None or metric not in METRICS or not vol.get("attachments"):
            return [], []
        if start % SLOT_S or period % SLOT_S or period <= 0:
            pts = self.series(vid, metric, stat, start, end, period)
            return [t for t, _ in pts], [v for _, v in pts]
        end = min(end, self.sim.now())
        if end <= start:
            return [], []
        first = max(self.origin(vol), math.floor(start / SLOT_S) * SLOT_S)
        last = math.ceil(end / SLOT_S) * SLOT_S
        if first >= last:
            return [], []
        solved = self._solved(vid, first, last)
        n = int(period // SLOT_S)
        tids, templates = solved.tids, solved.templates
        # the first point at or after the volume's history starts (series(): t >= lo)
        t = start
        if t < first:
            t += int(math.ceil((first - t) / period)) * period
        per_minute = stat in ("Minimum", "Maximum") or stat.startswith("p")
        cache = solved.points.setdefault((metric, stat, period), {})
        k = int(round((t - first) / SLOT_S))
        count = max(0, int((end - t) // period)) if t + period <= end else 0
        while count and t + count * period > end:   # float-safe: t + period * count <= end
            count -= 1
        while t + (count + 1) * period <= end:
            count += 1
        if n == 1:
            runs = tids[k:k + count]
            todo = set(runs).difference(cache)
            if todo:
                one = _ONE_SLOT_POINT.get((metric, stat))
                w = self.workload(vid, vol)
                for run in todo:
                    cache[run] = one(templates[run], w) if one else \
                        self._point(metric, stat, vid, [templates[run]], 0.0, period, per_minute)
        else:
            runs = [tuple(tids[i:i + n]) for i in range(k, k + count * n, n)]
            for run in set(runs).difference(cache):
                slots = []
                for j, tid in enumerate(run):
                    c = Slot()
                    for name in Slot.__slots__:
                        setattr(c, name, getattr(templates[tid], name))
                    c.t = j * SLOT_S
                    slots.append(c)
                cache[run] = self._point(metric, stat, vid, slots, 0.0, period, per_minute)
        vs = [cache[run] for run in runs]
        ts = list(range(t, t + count * period, period)) if isinstance(t, int) and isinstance(period, int) \
            else [t + i * period for i in range(count)]
        if None in vs:
            keep = [i for i, v in enumerate(vs) if v is not None]
            ts = [ts[i] for i in keep]
            vs = [vs[i] for i in keep]
        return ts, vs

    # ---- aggregation

    def value(self, metric, vid, slots, a, b):
        """(integral-or-average value over [a, b), seconds covered) for one metric."""
        vol = self.sim.volumes[vid]
        w = self.workload(vid, vol)
        total = 0.0
        covered = 0.0
        if not slots:
            return None, 0.0
        i0 = max(0, int((a - slots[0].t) // SLOT_S))
        i1 = min(len(slots), int(math.ceil((b - slots[0].t) / SLOT_S)) + 1)
        for s in slots[i0:i1]:
            x = max(a, s.t) - s.t
            y = min(b, s.t + s.length) - s.t
            if y <= x:
                continue
            covered += y - x
            if metric in ("VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes",
                          "VolumeWriteBytes", "VolumeIdleTime", "VolumeTotalReadTime",
                          "VolumeTotalWriteTime", "VolumeQueueLength"):
                units = s.r1 * _overlap(x, y, 0, s.te) + s.r2 * _overlap(x, y, s.te, s.length)
                ops = units / s.units
                if metric == "VolumeReadOps":
                    total += ops * w.read_frac
                elif metric == "VolumeWriteOps":
                    total += ops * (1 - w.read_frac)
                elif metric in ("VolumeReadBytes", "VolumeWriteBytes"):
                    per_op = (w.total_mibps * 1048576.0 / w.total_iops) if w.total_iops else 0.0
                    frac = w.read_bytes_frac if metric == "VolumeReadBytes" else 1 - w.read_bytes_frac
                    total += ops * per_op * frac
                elif metric == "VolumeIdleTime":
                    total += (y - x) if ops == 0 else 0.0
                elif metric in ("VolumeTotalReadTime", "VolumeTotalWriteTime"):
                    frac = w.read_frac if metric == "VolumeTotalReadTime" else 1 - w.read_frac
                    total += ops * frac * self._latency(s, w, units / (y - x) if y > x else 0)
                else:  # queue length, time-weighted
                    rate = units / (y - x) / s.units if y > x else 0.0
                    total += self._queue(s, w, rate) * (y - x)
            elif metric == "BurstBalance":
                if s.bursting:
                    total += _bucket_integral(s, x, y) / BUCKET * 100.0
                elif s.config_type in ("gp2", "st1", "sc1"):
                    total += 100.0 * (y - x)
                else:
                    covered -= y - x
            elif metric == "VolumeIOPSExceededCheck":
                d = s.demand_ops * s.units
                exceeded = 0.0
                if d > s.r1 + 1e-9:
                    exceeded += _overlap(x, y, 0, s.te)
                if d > s.r2 + 1e-9:
                    exceeded += _overlap(x, y, s.te, s.length)
                total += exceeded
            elif metric == "VolumeThroughputExceededCheck":
                total += (y - x) if s.tput_demand > s.tput_cap + 1e-9 else 0.0
        if metric in ("BurstBalance", "VolumeQueueLength", "VolumeIOPSExceededCheck",
                      "VolumeThroughputExceededCheck"):
            return (total / covered if covered else None), covered
        return total, covered

    @staticmethod
    def _latency(s, w, ops_rate):
        if w.queue_depth and ops_rate > 0:
            return float(w.queue_depth) / ops_rate
        return BASE_LATENCY_S

    @staticmethod
    def _queue(s, w, ops_rate):
        if ops_rate <= 0:
            return 0.0
        if w.queue_depth:
            return float(w.queue_depth)
        demand = s.demand_ops
        q = ops_rate * BASE_LATENCY_S
        if demand > ops_rate * 1.0001:  # throttled: latency grows with the overload ratio
            q *= (demand / ops_rate) ** 2
        return min(q, 256.0)

    def series(self, vid, metric, stat, start, end, period):
        """[(timestamp, value)] ascending for one metric/stat, CloudWatch-style."""
        vol = self.sim.volumes.get(vid)
        if vol is None or metric not in METRICS:
            return []
        if not vol.get("attachments"):
            return []
        now = self.sim.now()
        end = min(end, now)
        if end <= start:
            return []
        slots = self.slots(vid, start, end)
        if not slots:
            return []
        lo = slots[0].t
        out = []
        t = start
        per_minute = stat in ("Minimum", "Maximum") or stat.startswith("p")
        while t + period <= end:
            if t >= lo:
                pts = self._point(metric, stat, vid, slots, t, period, per_minute)
                if pts is not None:
                    out.append((t, pts))
            t += period
        return out

    def _point(self, metric, stat, vid, slots, t, period, per_minute):
        rated = metric in ("BurstBalance", "VolumeQueueLength", "VolumeIOPSExceededCheck",
                           "VolumeThroughputExceededCheck")
        if not per_minute:
            value, covered = self.value(metric, vid, slots, t, t + period)
            if covered <= 0 or value is None:
                return None
            minutes = max(1.0, covered / 60.0)
            if stat == "Sum":
                return value * minutes if rated else value
            if stat == "SampleCount":
                return float(round(minutes))
            return value if rated else value / minutes  # Average
        step = 60.0 if period >= 60 else period
        vals = []
        m = t
        while m < t + period - 1e-9:
            v, covered = self.value(metric, vid, slots, m, m + step)
            if covered > 0 and v is not None:
                vals.append(v)
            m += step
        if not vals:
            return None
        if stat == "Minimum":
            return min(vals)
        if stat == "Maximum":
            return max(vals)
        try:
            q = float(stat[1:])
        except ValueError:
            return None
        vals.sort()
        k = min(len(vals) - 1, max(0, int(math.ceil(q / 100.0 * len(vals))) - 1))
        return vals[k]
