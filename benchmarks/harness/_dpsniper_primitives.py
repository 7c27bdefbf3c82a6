"""Exact integer building blocks of two of DP-Sniper's mechanisms (re-exported by :mod:`benchmarks.harness.dpsniper`):
the integer CDFs of Balcer–Vadhan's GeoSample and RAPPOR's Bloom filter, hashed with MurmurHash3."""
from __future__ import annotations

import math

import numpy as np


def geo_sample_cdf(eps: float = 0.1, n: int = 5) -> tuple:
    """Balcer–Vadhan GeoSample(ε, n)'s integer CDFs, one per count ``c`` in ``[0, n]``.

    ``k = ⌈ln(2/ε)⌉``, ``d = (2^{k+1} + 1)(2^k + 1)^{n−1}`` and ``P[z' <= z] = F_c(z)/d`` with, for ``z < c``,
    ``F_c(z) = 2^{k(c−z)} (2^k + 1)^{n−(c−z)}``; for ``c <= z < n``,
    ``F_c(z) = d − 2^{k(z−c+1)} (2^k + 1)^{n−1−(z−c)}``; ``F_c(n) = d``.

    Args:
        eps: the ε of GeoSample (default: the suite's claimed ε, 0.1).
        n: the largest count (outputs lie in ``[0, n]``).

    Returns:
        ``(k, d, F)`` with ``F`` an ``(n+1, n+1)`` int64 array (row ``c``: the CDF for count ``c``).
    """
    k = math.ceil(math.log(2.0 / eps))
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (n - 1)
    F = np.zeros((n + 1, n + 1), np.int64)
    for c in range(n + 1):
        for z in range(n + 1):
            if z == n:
                F[c, z] = d
            elif z < c:
                F[c, z] = 2 ** (k * (c - z)) * (2 ** k + 1) ** (n - (c - z))
            else:
                F[c, z] = d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (n - 1 - (z - c))
    return k, d, F


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit (Appleby), as a signed 32-bit integer (the convention of the ``mmh3`` package).

    Args:
        data: the bytes to hash.
        seed: the hash seed (taken modulo ``2^32``).

    Returns:
        The hash, in ``[−2^31, 2^31)``.
    """
    m32 = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m32

    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & m32
    nb = len(data) // 4
    for i in range(nb):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = rotl((k * c1) & m32, 15) * c2 & m32
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & m32
    tail = data[4 * nb:]
    k = 0
    for j in reversed(range(len(tail))):
        k ^= tail[j] << (8 * j)
    if tail:
        h ^= rotl((k * c1) & m32, 15) * c2 & m32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m32
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def bloom_filter(value: int, n_hashes: int = 4, size: int = 20) -> np.ndarray:
    """RAPPOR's Bloom filter of an integer value: bit ``murmur3_32(str(value), seed=i) mod size`` set, ``i < n_hashes``.

    Args:
        value: the value (hashed as its decimal string).
        n_hashes: the number of hash functions (seeds ``0 … n_hashes − 1``).
        size: the number of bits of the filter.

    Returns:
        A float32 vector of ``size`` entries, 1.0 at the set bits.
    """
    bits = np.zeros(size, np.float32)
    for i in range(n_hashes):
        bits[murmur3_32(str(int(value)).encode(), seed=i) % size] = 1.0
    return bits
