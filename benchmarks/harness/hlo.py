"""Reading an exported StableHLO module: violations, random words and loop-carry bytes per call.

:func:`analyze_module` takes a module's text (``jax.export.Exported.mlir_module()``
or ``Lowered.as_text()``) and returns a :class:`ModuleStats`:

* **violations**: host callbacks (``stablehlo.custom_call`` targets such as
  ``xla_python_cpu_callback``, ``xla_ffi_python_cpu_callback``, any
  ``*callback*``), host transfers (``send``, ``recv``, ``infeed``,
  ``outfeed``) and CPU-only custom calls (LAPACK ``lapack_*``, ``ducc_fft``,
  ``*_cpu_*``). A module with any of them would stall on, or not run on, an
  accelerator. Every op of every function is checked, every branch included.
* **random words per call**: 32-bit words produced by the random-number
  generator: the outputs of every ``threefry2x32`` call (``jax.random``'s
  default generator, lowered as integer arithmetic) and of every
  ``stablehlo.rng_bit_generator``, each multiplied by the trip counts of the
  loops around it. The words of ``split``/``fold_in`` key derivations are
  included, and also reported apart as ``key_words``.
* **carry bytes per call**: bytes of the ``stablehlo.while`` loop state that
  the body changes, read and written once per iteration, times the trip count,
  summed over every loop. An element the body returns unchanged (a loop
  constant, e.g. a table the loop reads a row of) is passed by reference and
  not counted: its size is reported apart (``invariant_bytes``, the largest
  over the loops), since how much of it an iteration reads is not known.
  Only per-seed arrays count: modules are exported for one seed, so an array
  whose leading dimension is 1 belongs to that seed; the others (scalars,
  checkpoint tables) are shared by every seed of a batch and are reported apart
  (``shared_carry_bytes``).

Where a ``case``/``if`` has several branches (a ``lax.cond``, or one branch
per platform in a multi-platform export), the largest branch is counted, so
both counts are upper bounds on one execution; a loop whose trip count is
not a constant (``i < c`` with constant ``c`` and start) is counted once and
reported in ``unknown_trip_loops``.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Optional, Sequence

import numpy as np

__all__ = ["ModuleStats", "analyze_module", "FORBIDDEN_PATTERNS", "HOST_TRANSFER_OPS"]

# custom-call targets (regular expressions) that must not appear in an accelerator module
FORBIDDEN_PATTERNS = {
    "host callback": re.compile(r"callback", re.I),
    "CPU-only custom call": re.compile(r"^(lapack_|ducc_|cpu_)|_cpu_|_cpu$", re.I),
}
HOST_TRANSFER_OPS = ("stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed")

_ELEM_BYTES = {"i1": 1, "i2": 1, "i4": 1, "i8": 1, "ui8": 1, "i16": 2, "ui16": 2, "f16": 2, "bf16": 2, "i32": 4,
               "ui32": 4, "f32": 4, "i64": 8, "ui64": 8, "f64": 8, "f8E4M3FN": 1, "f8E5M2": 1,
               "complex<f32>": 8, "complex<f64>": 16}


# --------------------------------------------------------------------------- IR analysis


def _shape_dtype(type_str: str) -> Optional[tuple[tuple[int, ...], str]]:
    """``tensor<1x64xf32>`` -> ``((1, 64), "f32")``; None for non-tensors (tokens)."""
    t = type_str.strip()
    if not (t.startswith("tensor<") and t.endswith(">")):
        return None
    body = t[len("tensor<"):-1].split(",")[0].strip()
    m = re.fullmatch(r"((?:(?:\d+|\?)x)*)(.+)", body)
    assert m is not None  # the pattern matches every string
    dims = tuple(int(d) if d.isdigit() else -1 for d in m.group(1).split("x") if d)
    return dims, m.group(2)


def _nbytes(type_str: str) -> int:
    sd = _shape_dtype(type_str)
    if sd is None:
        return 0
    dims, dt = sd
    n = int(np.prod([max(d, 1) for d in dims], dtype=np.int64)) if dims else 1
    return n * _ELEM_BYTES.get(dt, 4)


def _numel(type_str: str) -> int:
    sd = _shape_dtype(type_str)
    if sd is None:
        return 0
    return int(np.prod([max(d, 1) for d in sd[0]], dtype=np.int64)) if sd[0] else 1


def _per_seed(type_str: str) -> bool:
    sd = _shape_dtype(type_str)
    return sd is not None and len(sd[0]) >= 1 and sd[0][0] == 1


@dataclasses.dataclass
class _Cost:
    rng_words: float = 0.0
    key_words: float = 0.0
    carry_bytes: float = 0.0          # per-seed loop-state traffic
    shared_carry_bytes: float = 0.0   # loop-state traffic of arrays shared by all seeds

    def __add__(self, o: "_Cost") -> "_Cost":
        return _Cost(self.rng_words + o.rng_words, self.key_words + o.key_words, self.carry_bytes + o.carry_bytes,
                     self.shared_carry_bytes + o.shared_carry_bytes)

    def scale(self, k: float) -> "_Cost":
        return _Cost(self.rng_words * k, self.key_words * k, self.carry_bytes * k, self.shared_carry_bytes * k)

    @staticmethod
    def max(cs: Sequence["_Cost"]) -> "_Cost":
        if not cs:
            return _Cost()
        return _Cost(max(c.rng_words for c in cs), max(c.key_words for c in cs), max(c.carry_bytes for c in cs),
                     max(c.shared_carry_bytes for c in cs))


@dataclasses.dataclass
class ModuleStats:
    """What :func:`analyze_module` reads from one StableHLO module (counts per call of ``main``; module docstring).

    Attributes:
        rng_words: 32-bit random words drawn per call (loop trip counts applied; the largest branch).
        key_words: the part of ``rng_words`` drawn for key derivations (``split``/``fold_in``).
        carry_bytes: per-seed loop-state bytes read and written per call (leading dimension 1).
        shared_carry_bytes: loop-state bytes of arrays shared by every seed (scalars, tables).
        loops: the number of ``stablehlo.while`` loops costed.
        unknown_trip_loops: loops whose trip count is not a constant (counted once).
        custom_calls: custom-call target -> number of call sites.
        violations: one line per host callback, host transfer or CPU-only custom call found.
        uses_f64: the module's text has a float64 tensor.
        threefry_calls: the number of ``threefry2x32`` call sites costed.
        rng_bit_generator_ops: the number of ``stablehlo.rng_bit_generator`` ops costed.
        invariant_bytes: the largest per-seed loop constant passed by reference, in bytes, over the loops.
    """

    rng_words: float
    key_words: float
    carry_bytes: float
    shared_carry_bytes: float
    loops: int
    unknown_trip_loops: int
    custom_calls: dict
    violations: list
    uses_f64: bool
    threefry_calls: int
    rng_bit_generator_ops: int
    invariant_bytes: float = 0.0


def _ir_context():
    # jax's own context has every dialect an exported module uses registered
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def _attr_str(op, name: str) -> Optional[str]:
    try:
        a = op.attributes[name]
    except (KeyError, ValueError):
        return None
    s = str(a)
    return s[1:-1] if s.startswith('"') and s.endswith('"') else s


def _const_int(value) -> Optional[int]:
    """The integer value of ``value`` if it is defined by a scalar ``stablehlo.constant``."""
    from jax.extend.mlir import ir

    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner if isinstance(owner, ir.Operation) else getattr(owner, "operation", None)
    if op is None or op.name != "stablehlo.constant":
        return None
    m = re.search(r"dense<(-?\d+)>", str(op.attributes["value"]))
    return int(m.group(1)) if m else None


def _trip_count(while_op) -> Optional[int]:
    """Trip count of a ``stablehlo.while`` whose condition is ``i < c`` (or ``c > i``) with constants."""
    from jax.extend.mlir import ir

    cond = while_op.regions[0].blocks[0]
    ops = list(cond.operations)
    ret = ops[-1]
    if not ret.operands:
        return None
    pred = ret.operands[0]
    cmp = pred.owner
    cmp = cmp if isinstance(cmp, ir.Operation) else getattr(cmp, "operation", None)
    if cmp is None or cmp.name != "stablehlo.compare":
        return None
    direction = str(cmp.attributes["comparison_direction"])
    lhs, rhs = cmp.operands[0], cmp.operands[1]
    args = list(cond.arguments)

    def arg_index(v):
        for i, a in enumerate(args):
            if a == v:
                return i
        return None

    for it, lim, flip in ((lhs, rhs, False), (rhs, lhs, True)):
        i = arg_index(it)
        if i is None:
            continue
        c = _const_int(lim)
        init = _const_int(while_op.operands[i])
        if c is None or init is None:
            return None
        lt = ("LT" in direction and not flip) or ("GT" in direction and flip)
        le = ("LE" in direction and not flip) or ("GE" in direction and flip)
        if lt:
            return max(c - init, 0)
        if le:
            return max(c - init + 1, 0)
        return None
    return None


def analyze_module(text: str) -> ModuleStats:
    """Read a StableHLO module's text (``Exported.mlir_module()`` or ``Lowered.as_text()``).

    Finds the random words drawn, the loop-carry traffic in bytes (per seed and shared), the custom-call
    targets with their counts, and the violations (host callbacks, host transfers, CPU-only custom calls):
    see the module docstring for the exact counting rules. Costs are those of the function ``main`` (or the
    module's first function).

    Args:
        text: the module's MLIR text.

    Returns:
        The :class:`ModuleStats`.
    """
    from jax.extend.mlir import ir

    ctx = _ir_context()
    with ctx:
        module = ir.Module.parse(text)
        funcs = {}
        for op in module.body.operations:
            if op.operation.name == "func.func":
                funcs[_attr_str(op.operation, "sym_name")] = op.operation
        custom: Counter = Counter()
        transfers: Counter = Counter()
        counters: Counter = Counter()

        # checks cover every op of every function (both branches of every case)
        def scan_all(op):
            name = op.name
            if name == "stablehlo.custom_call":
                custom[_attr_str(op, "call_target_name") or "?"] += 1
            elif name in HOST_TRANSFER_OPS:
                transfers[name] += 1
            for reg in op.regions:
                for blk in reg.blocks:
                    for o in blk.operations:
                        scan_all(o.operation)

        for f in funcs.values():
            scan_all(f)

        memo: dict = {}
        flags = {"loops": 0, "unknown": 0, "invariant": 0.0}

        def cost_block(blk, key_ctx: bool) -> _Cost:
            total = _Cost()
            for o in blk.operations:
                total = total + cost_op(o.operation, key_ctx)
            return total

        def cost_func(name: str, key_ctx: bool) -> _Cost:
            k = (name, key_ctx)
            if k not in memo:
                memo[k] = _Cost()  # recursion guard (MLIR calls are acyclic in practice)
                f = funcs.get(name)
                memo[k] = cost_block(f.regions[0].blocks[0], key_ctx) if f is not None else _Cost()
            return memo[k]

        def cost_op(op, key_ctx: bool) -> _Cost:
            name = op.name
            if name == "func.call":
                callee = _attr_str(op, "callee") or ""
                callee = callee.lstrip("@")
                if callee.startswith("threefry2x32"):
                    counters["threefry"] += 1
                    words = float(sum(_numel(str(r.type)) for r in op.results))
                    return _Cost(rng_words=words, key_words=words if key_ctx else 0.0)
                kc = key_ctx or callee.startswith(("_threefry_split", "_threefry_fold_in", "threefry_split",
                                                   "threefry_fold_in"))
                return cost_func(callee, kc)
            if name == "stablehlo.rng_bit_generator":
                counters["rbg"] += 1
                out = str(op.results[1].type)
                sd = _shape_dtype(out)
                bits = _numel(out) * (8 * _ELEM_BYTES.get(sd[1], 4) if sd else 32)
                w = bits / 32.0
                return _Cost(rng_words=w, key_words=w if key_ctx else 0.0)
            if name == "stablehlo.rng":
                counters["rng"] += 1
                return _Cost(rng_words=float(_numel(str(op.results[0].type))))
            if name == "stablehlo.while":
                flags["loops"] += 1
                n = _trip_count(op)
                if n is None:
                    flags["unknown"] += 1
                    n = 1
                body = op.regions[1].blocks[0]
                inner = cost_block(op.regions[0].blocks[0], key_ctx) + cost_block(body, key_ctx)
                ret = list(body.operations)[-1]
                args = list(body.arguments)
                per_seed = shared = inv = 0.0
                for i, a in enumerate(args):
                    t = str(a.type)
                    if i < len(ret.operands) and ret.operands[i] == a:  # loop constant: passed by reference
                        inv += _nbytes(t) if _per_seed(t) else 0
                        continue
                    if _per_seed(t):
                        per_seed += 2 * _nbytes(t)
                    else:
                        shared += 2 * _nbytes(t)
                flags["invariant"] = max(flags["invariant"], inv)
                return (inner + _Cost(carry_bytes=per_seed, shared_carry_bytes=shared)).scale(n)
            if name in ("stablehlo.case", "stablehlo.if"):
                return _Cost.max([cost_block(r.blocks[0], key_ctx) for r in op.regions])
            total = _Cost()
            for reg in op.regions:
                for blk in reg.blocks:
                    total = total + cost_block(blk, key_ctx)
            return total

        main = "main" if "main" in funcs else next(iter(funcs))
        c = cost_func(str(main), False)
        violations = []
        for tgt, n in sorted(custom.items()):
            for what, pat in FORBIDDEN_PATTERNS.items():
                if pat.search(tgt):
                    violations.append(f"{what}: custom_call @{tgt} (x{n})")
        for op_name, n in sorted(transfers.items()):
            violations.append(f"host transfer: {op_name} (x{n})")
        return ModuleStats(rng_words=c.rng_words, key_words=c.key_words, carry_bytes=c.carry_bytes,
                           shared_carry_bytes=c.shared_carry_bytes, loops=int(flags["loops"]),
                           unknown_trip_loops=int(flags["unknown"]), custom_calls=dict(custom), violations=violations,
                           uses_f64="f64>" in text, threefry_calls=counters["threefry"],
                           rng_bit_generator_ops=counters["rbg"], invariant_bytes=flags["invariant"])
