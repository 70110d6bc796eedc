"""Exact cut points of the block cutter (Fabric's blockcutter.Ordered / Cut)."""
from osn.block_cutter import BlockCutter, Message


def msg(size: int, tag: int = 0) -> Message:
    return Message(raw=bytes([tag]), size=size)


def feed(cutter: BlockCutter, sizes: list[int]) -> list[list[int]]:
    """Tags (positions) of the messages in each batch cut while feeding `sizes`."""
    cut = []
    for i, size in enumerate(sizes):
        batches, _ = cutter.ordered(msg(size, i))
        cut.extend([m.raw[0] for m in batch] for batch in batches)
    return cut


def test_max_message_count_cuts_exactly_at_the_count():
    cutter = BlockCutter(max_message_count=3, preferred_max_bytes=1000)
    assert feed(cutter, [10] * 7) == [[0, 1, 2], [3, 4, 5]]
    assert cutter.pending


def test_message_that_would_overflow_preferred_bytes_starts_the_next_batch():
    cutter = BlockCutter(max_message_count=100, preferred_max_bytes=100)
    # 40 + 40 = 80; + 30 would be 110 > 100: cut [0, 1], then 2 pending.
    assert feed(cutter, [40, 40, 30]) == [[0, 1]]
    assert [m.raw[0] for m in cutter.cut()] == [2]


def test_batch_reaching_preferred_bytes_exactly_is_not_cut_by_bytes():
    cutter = BlockCutter(max_message_count=100, preferred_max_bytes=100)
    assert feed(cutter, [50, 50]) == []
    assert feed(cutter, [1]) == [[0, 1]]


def test_oversized_message_is_isolated_after_cutting_the_pending_batch():
    cutter = BlockCutter(max_message_count=100, preferred_max_bytes=100)
    cutter.ordered(msg(10, 0))
    batches, pending = cutter.ordered(msg(101, 1))
    assert [[m.raw[0] for m in b] for b in batches] == [[0], [1]]
    assert not pending


def test_oversized_message_with_nothing_pending_is_a_single_batch():
    cutter = BlockCutter(max_message_count=100, preferred_max_bytes=100)
    batches, pending = cutter.ordered(msg(500, 7))
    assert [[m.raw[0] for m in b] for b in batches] == [[7]]
    assert not pending


def test_cut_returns_pending_and_empties_the_cutter():
    cutter = BlockCutter(max_message_count=10, preferred_max_bytes=1000)
    feed(cutter, [1, 2])
    assert [m.raw[0] for m in cutter.cut()] == [0, 1]
    assert cutter.cut() == []
    assert not cutter.pending


def test_bytes_are_counted_afresh_after_a_cut():
    cutter = BlockCutter(max_message_count=100, preferred_max_bytes=100)
    # 60 | 60 + 30 = 90 | + 20 = 110 overflows, so [1, 2] is cut and 3 waits
    assert feed(cutter, [60, 60, 30, 20]) == [[0], [1, 2]]
    assert [m.raw[0] for m in cutter.cut()] == [3]
