"""What every game's compiled kernel (``envs/<game>/kernel.py``) shares: numba's decorators, one compilation
per function, and ``random.Random``'s Mersenne Twister word for word.

A kernel is an accelerator beside a game's rules, never a second reading of them (docs/architecture.md,
"Compiled kernels"). Each kernel makes one :class:`Kernel` and decorates its functions with its
``inlined``, ``compiled`` and ``compiled_allocating``; code beside the rules that builds on a kernel (a
bot's rollout policy, a search) decorates with the same kernel's decorators, so that
:meth:`Kernel.compile` compiles all of it together, callees first. Every function compiles once, for
the argument types its parameter names stand for (:data:`SHARED_ARGUMENTS` and the kernel's own), and
numba caches the machine code beside the source: a second process starts at once.

The generator: :func:`seed_generator` is ``random.Random(seed)``, :func:`random_float` its ``random()``;
a kernel's ``below(n)`` is ``int(random_float(mt) * n)``, as ``Chance.below``, so a kernel dealt from
the same seed draws exactly what the Python engine's Chance draws. ``mt`` is 625 uint32: the 624 words
and the position, as ``random.Random.getstate()`` holds them.

Without numba (an optional dependency: ``pip install 'tavernzoo[kernel]'``) the decorators hand the
functions back as plain Python and every kernel says it is unavailable (:func:`missing`); everything
then runs on the Python rules.

Why each kernel writes its own batch loops: the Python side of a kernel (its ``Batch``, the checks of what
callers hand in, the generic reasons of ``unsupported``, the Python fallback of ``random_rollouts``,
``first_difference`` over a ``RowLayout``) is shared, in ``envs/kernel_batch.py``. The compiled batch loops
(``_new_games``, ``_legal_masks``, ``_first_illegal``, ``_step_all``, ``_rollouts``, ``_returns_all``) look
alike in every kernel but are not shared, and should not be: a loop written once here would have to take
the game's ``legal_actions``/``apply_legal`` either as a closure (numba caches no closure, so every process
would compile it again) or as a compiled function passed as an argument (about a millisecond a call, more
than a whole batched step).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

try:
    import numba
except ImportError:  # the kernels are optional: everything works on the Python rules without them
    numba = None

MT_SIZE = 625  # the Mersenne Twister's 624 words and its position, as random.Random.getstate() holds them


def missing() -> str | None:
    """Why no kernel can run here (None: numba is installed)."""
    return None if numba is not None else "numba is not installed (pip install 'tavernzoo[kernel]')"


def _shared_arguments() -> dict[str, Any]:
    """The parameter names every kernel reads the same way (numba types, built on first compilation)."""
    from numba import types

    return {"mt": types.uint32[::1], "seed": types.int64, "policy": types.uint64,
            "policy_state": types.uint64[::1]}


class Kernel:
    """The compiled functions of one game's kernel and of the code that builds on it.

    ``arguments`` maps parameter names to numba types (called at the first compilation, so that numba's
    types are imported only then); every parameter not named there or in :func:`_shared_arguments` is an
    int64. ``includes`` are kernels whose functions this one calls (compiled first)."""

    def __init__(self, arguments: Callable[[], Mapping[str, Any]], includes: tuple[Kernel, ...] = ()):
        self._arguments = arguments
        self._includes = includes
        self.functions: list = []  # every dispatcher, in the order of definition
        self._compiled: set = set()

    def inlined(self, function):
        """:meth:`compiled`, and written into its callers by numba (``inline="always"``): numba links the
        functions it compiles without inlining them, and the small ones run several times a step."""
        if numba is None:
            return function
        dispatcher = numba.njit(cache=True, _nrt=False, error_model="numpy", inline="always")(function)
        self.functions.append(dispatcher)
        return dispatcher

    def compiled(self, function):
        """``numba.njit(cache=True)`` without reference counting: these functions allocate nothing (working
        space is in the game's row), and numba's counting of the arrays they pass each other was most of a
        step's time. Without numba the function stays plain Python; nothing calls it then."""
        if numba is None:
            return function
        dispatcher = numba.njit(cache=True, _nrt=False, error_model="numpy")(function)
        self.functions.append(dispatcher)
        return dispatcher

    def compiled_allocating(self, function):
        """:meth:`compiled` for the batch loops, which allocate their working arrays (numba's runtime)."""
        if numba is None:
            return function
        dispatcher = numba.njit(cache=True)(function)
        self.functions.append(dispatcher)
        return dispatcher

    def compiled_parallel(self, function):
        """:meth:`compiled_allocating` with numba's ``parallel=True``: a batch loop over games written with
        ``numba.prange`` runs its games on every core. Each game touches only its own rows, so the results
        are those of the same loop run serially (a function decorated with :meth:`compiled_allocating`,
        where ``prange`` is ``range``)."""
        if numba is None:
            return function
        dispatcher = numba.njit(cache=True, parallel=True)(function)
        self.functions.append(dispatcher)
        return dispatcher

    def argument_types(self, function) -> tuple:
        """The numba types of ``function``'s parameters, by name: every other parameter is an int64, so each
        function compiles once instead of once per combination of literals and int widths."""
        from numba import types

        named = {**_shared_arguments(), **self._arguments()}
        names = function.__code__.co_varnames[:function.__code__.co_argcount]
        return tuple(named.get(name, types.int64) for name in names)

    def _with_includes(self) -> list[Kernel]:
        """This kernel and every kernel it includes, at any depth (an encoder includes the game's kernel, a
        vector env the encoder)."""
        kernels: list[Kernel] = []
        for kernel in self._includes:
            kernels += [k for k in kernel._with_includes() if k not in kernels]
        return [*kernels, self]

    def _by_name(self) -> dict[str, Any]:
        by_name: dict[str, Any] = {}
        for kernel in self._includes:
            by_name.update(kernel._by_name())
        by_name.update({dispatcher.py_func.__name__: dispatcher for dispatcher in self.functions})
        return by_name

    def compile(self) -> None:
        """Compile every function (or load it from numba's cache), callees first so that each caller links
        the one version of each; nothing to compile by hand. The entry points call this themselves."""
        if numba is None or numba.config.DISABLE_JIT:  # DISABLE_JIT: plain Python
            return
        for kernel in self._includes:
            kernel.compile()
        if len(self._compiled) == len(self.functions):
            return
        by_name = self._by_name()
        owner = {id(dispatcher): kernel for kernel in self._with_includes() for dispatcher in kernel.functions}

        def visit(dispatcher) -> frozenset[str]:
            """Compile ``dispatcher`` after its callees; the source files its machine code depends on."""
            kernel = owner.get(id(dispatcher), self)
            if dispatcher in kernel._compiled:
                return _SOURCES.get(id(dispatcher), frozenset())
            kernel._compiled.add(dispatcher)
            sources = {dispatcher.py_func.__code__.co_filename}
            for name in dispatcher.py_func.__code__.co_names:
                if name in by_name:
                    sources |= visit(by_name[name])
            _SOURCES[id(dispatcher)] = frozen = frozenset(sources)
            _drop_stale_cache(dispatcher, frozen)
            dispatcher.compile(kernel.argument_types(dispatcher.py_func))
            dispatcher.disable_compile()
            return frozen

        for dispatcher in self.functions:
            visit(dispatcher)


_SOURCES: dict[int, frozenset[str]] = {}  # id of a compiled function -> the source files its code depends on


@functools.cache
def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def _drop_stale_cache(dispatcher: Any, sources: frozenset[str]) -> None:
    """Forget ``dispatcher``'s cached machine code when a file it calls into changed since it was cached.

    numba's cache checks only the function's own file: a caller cached before an edit of a callee in another
    file (a bot's rollout policy calling its game's kernel, a vector env calling the encoder) would load the
    old callee's code, linked in. So each cached function keeps a stamp of every file its code depends on
    (itself and its callees, at any depth) beside numba's index, and a stamp that differs drops the index
    (numba then compiles afresh and caches anew). Best effort: without a cache folder nothing is kept."""
    cache = getattr(dispatcher, "_cache", None)
    folder = getattr(cache, "_cache_path", None)
    if folder is None or not hasattr(cache, "flush"):
        return
    function = dispatcher.py_func
    stamp = Path(folder) / f"{function.__module__}.{function.__qualname__}.sources"
    digest = "\n".join(f"{_file_digest(path)} {Path(path).name}" for path in sorted(sources))
    try:
        if stamp.is_file() and stamp.read_text() == digest:
            return
        cache.flush()
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then caches elsewhere or not at all
        pass


# --- chance: random.Random's Mersenne Twister, word for word ---------------------------------------------------

GENERATOR = Kernel(dict)


@GENERATOR.compiled
def regenerate(mt):
    """The next 624 words at once, in CPython's three loops (no modulo in the hot loop)."""
    for i in range(227):
        y = (np.uint32(mt[i]) & np.uint32(0x80000000)) | (mt[i + 1] & np.uint32(0x7FFFFFFF))
        mt[i] = mt[i + 397] ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * np.uint32(0x9908B0DF))
    for i in range(227, 623):
        y = (np.uint32(mt[i]) & np.uint32(0x80000000)) | (mt[i + 1] & np.uint32(0x7FFFFFFF))
        mt[i] = mt[i - 227] ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * np.uint32(0x9908B0DF))
    y = (np.uint32(mt[623]) & np.uint32(0x80000000)) | (mt[0] & np.uint32(0x7FFFFFFF))
    mt[623] = mt[396] ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * np.uint32(0x9908B0DF))


@GENERATOR.inlined
def next_word(mt):
    """The next 32-bit output of the generator (CPython's ``genrand_uint32``)."""
    pos = mt[624]
    if pos >= 624:
        regenerate(mt)
        pos = 0
    y = np.int64(mt[pos])
    mt[624] = pos + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@GENERATOR.inlined
def random_float(mt):
    """``random.Random.random()``: 53 random bits as a float in [0, 1)."""
    a = next_word(mt) >> 5
    b = next_word(mt) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


def _init_genrand(seed: int) -> np.ndarray:
    """CPython's ``init_genrand``: the words ``init_by_array`` starts from, the same for every seed."""
    words = [seed]
    for i in range(1, 624):
        previous = words[-1]
        words.append((1812433253 * (previous ^ (previous >> 30)) + i) & 0xFFFFFFFF)
    return np.array(words, dtype=np.uint32)


GENRAND_19650218 = _init_genrand(19650218)  # computed once here, not once per game dealt (a third of seeding)


@GENERATOR.compiled
def seed_generator(mt, seed):
    """``random.Random(seed)`` for an int ``0 <= seed < 2**63``: CPython's ``init_by_array`` over the
    seed's 32-bit words, low first (one word for seeds below 2**32)."""
    for i in range(624):
        mt[i] = GENRAND_19650218[i]
    key0 = seed & 0xFFFFFFFF
    key1 = seed >> 32
    key_length = 2 if key1 else 1
    i, j = 1, 0
    for _ in range(max(624, key_length)):
        previous = np.int64(mt[i - 1])
        key = key0 if j == 0 else key1
        mt[i] = ((np.int64(mt[i]) ^ ((previous ^ (previous >> 30)) * 1664525)) + key + j) & 0xFFFFFFFF
        i += 1
        j += 1
        if i >= 624:
            mt[0] = mt[623]
            i = 1
        if j >= key_length:
            j = 0
    for _ in range(623):
        previous = np.int64(mt[i - 1])
        mt[i] = ((np.int64(mt[i]) ^ ((previous ^ (previous >> 30)) * 1566083941)) - i) & 0xFFFFFFFF
        i += 1
        if i >= 624:
            mt[0] = mt[623]
            i = 1
    mt[0] = 0x80000000
    mt[624] = 624


@GENERATOR.compiled
def policy_random(policy):
    """A uniform float in [0, 1) and the next policy state: splitmix64, a stream apart from the game's chance
    (a rollout's random moves must not shift the chance draws the Python engine would make)."""
    policy = policy + np.uint64(0x9E3779B97F4A7C15)
    z = policy
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0), policy
