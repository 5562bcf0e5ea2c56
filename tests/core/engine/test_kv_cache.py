"""The KV cache's cuts: a view for reading, a compact copy for feeding."""

import numpy as np

from gpt2viz.core.engine.kv_cache import KVCache


def _cache(length: int) -> KVCache:
    rng = np.random.default_rng(0)
    return KVCache(tuple((rng.normal(size=(1, 3, length, 4)).astype(np.float32),
                          rng.normal(size=(1, 3, length, 4)).astype(np.float32)) for _ in range(2)))


def test_compacted_is_the_truncation_in_contiguous_arrays_of_its_own():
    c = _cache(7)
    cut, compact = c.truncated(5), c.compacted(5)
    assert compact.length == 5 and compact.nbytes() == cut.nbytes()
    for (k, v), (ck, cv), (fk, fv) in zip(cut.layers, compact.layers, c.layers):
        np.testing.assert_array_equal(ck, k)
        np.testing.assert_array_equal(cv, v)
        assert ck.flags.c_contiguous and cv.flags.c_contiguous and not k.flags.c_contiguous
        assert not np.shares_memory(ck, fk) and not np.shares_memory(cv, fv)
    assert c.compacted(7) is c  # already its length: nothing to copy
