"""How the Ray engine cuts the shards into windows (one dataset and one
pool of actors each): large enough that a small run is one window whatever
the number of workers, bounded in bytes the driver holds."""
from spacy_struct.annotate.engines import windows


def _shards(n, bytes_per_line=10, lines=5):
    return [(i, [("f", i * lines + j, False, b"x" * bytes_per_line) for j in range(lines)]) for i in range(n)]


def test_a_small_run_is_one_window_for_any_number_of_workers():
    # 20 shards of 50 bytes: under the minimum bytes, so one window for 1 worker as for 2
    for workers in (1, 2):
        got = list(windows(_shards(20), workers, shards_per_worker=16, min_bytes=10_000))
        assert [[index for index, _ in w] for w in got] == [list(range(20))]


def test_windows_close_at_enough_shards_per_worker_and_bytes():
    # 50 bytes a shard: 4 shards per worker and 300 bytes -> windows of 8 shards for 2 workers
    got = list(windows(_shards(20), 2, shards_per_worker=4, min_bytes=300))
    assert [len(w) for w in got] == [8, 8, 4]
    assert [index for w in got for index, _ in w] == list(range(20))


def test_the_bytes_bound_closes_a_window_early():
    got = list(windows(_shards(10), 8, shards_per_worker=16, min_bytes=10, max_bytes=120))
    assert [len(w) for w in got] == [3, 3, 3, 1]
