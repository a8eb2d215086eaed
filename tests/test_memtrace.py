import torch

from torch_bench.measure.memtrace import format_memory_trace, trace_memory

MB = 2**20
kept = []


def allocate_known_amounts():
    small = torch.ones(1000)
    kept.append(torch.ones(96 * MB // 4))  # 96 MB, touched page by page
    kept.append(torch.zeros(40 * MB // 4).add_(1))
    return small


def test_the_line_that_allocates_most_comes_first_with_its_size():
    kept.clear()
    trace = trace_memory(allocate_known_amounts, include=[__file__], top=3)
    first, second = trace.top[0], trace.top[1]
    assert first.source == "kept.append(torch.ones(96 * MB // 4))  # 96 MB, touched page by page"
    assert 90 <= first.cpu_mb <= 110
    assert second.source.startswith("kept.append(torch.zeros(40")
    assert 36 <= second.cpu_mb <= 50
    assert first.gpu_mb is None and first.hits == 1
    assert trace.cpu_net_mb >= 130 and trace.cpu_peak_mb >= trace.cpu_net_mb - 1
    kept.clear()


def helper_allocates():
    return torch.ones(48 * MB // 4)


def test_memory_of_untraced_code_is_charged_to_the_calling_line(tmp_path):
    # Only the caller's file is traced: here, a helper module written to tmp_path.
    module = tmp_path / "caller.py"
    module.write_text("def run(fn):\n    x = fn()\n    return x\n")
    namespace: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    trace = trace_memory(lambda: namespace["run"](helper_allocates), include=[str(tmp_path)])
    assert (trace.top[0].line, trace.top[0].source) == (2, "x = fn()")
    assert trace.top[0].cpu_mb >= 44


def reuses_freed_memory():
    for _ in range(4):
        block = torch.ones(MB // 4)  # 1 MB, freed on the next line
        del block


def test_a_warmed_up_step_still_shows_what_each_line_allocates():
    reuses_freed_memory()  # the heap now holds a free 1 MB block that malloc would reuse
    trace = trace_memory(reuses_freed_memory, include=[__file__])
    assert trace.top[0].source.startswith("block = torch.ones(MB // 4)")
    assert trace.top[0].hits == 4
    if trace.heap_trimmed:  # glibc: freed pages go back, so each allocation shows again
        assert trace.top[0].cpu_mb >= 3.5


def test_the_trace_formats_as_hugging_face_prints_its_summary():
    kept.clear()
    trace = trace_memory(allocate_known_amounts, include=[__file__], top=1).to_dict()
    lines = format_memory_trace(trace, "tiny step")
    assert lines[0].startswith("memory trace: tiny step (RSS +")
    assert lines[1] == "Line by line memory consumption:"
    listing = lines[2:lines.index("")]
    assert len(listing) == len(trace["sequential"]) >= 4
    assert "test_memtrace.py:" in listing[1] and ": mem " in listing[1]
    top = lines.index("Lines with top memory consumption:")
    assert lines[top + 1].startswith("=> ") and "torch.ones(96" in lines[top + 1]
    assert "Lines with lowest memory consumption:" in lines
    assert lines[-1].startswith("Total memory increase: ") and lines[-1].endswith("MB")
    kept.clear()


def test_a_trace_stored_before_the_summary_still_formats_its_top_lines():
    old = {"top": [{"file": "/m/modeling.py", "line": 3, "source": "x = f()", "cpu_mb": 2.0,
                    "gpu_mb": None, "hits": 1}],
           "cpu_net_mb": 2.0, "cpu_peak_mb": 2.0, "lines_traced": 5, "heap_trimmed": True}
    lines = format_memory_trace(old, "old")
    assert len(lines) == 2 and "modeling.py:3" in lines[1]


def allocates_then_releases():
    block = torch.ones(64 * MB // 4)  # 64 MB
    other = torch.ones(MB // 4)
    del block
    return other


def test_the_summary_lists_lines_in_order_with_signed_changes_lowest_last_and_a_total():
    trace = trace_memory(allocates_then_releases, include=[__file__], top=2)
    listed = [trace.sources[index][2] for index, _, _ in trace.sequential]
    assert listed == ["block = torch.ones(64 * MB // 4)  # 64 MB", "other = torch.ones(MB // 4)",
                      "del block", "return other"]
    changes = {trace.sources[index][2]: cpu for index, cpu, _ in trace.sequential}
    assert changes["block = torch.ones(64 * MB // 4)  # 64 MB"] >= 60
    assert changes["del block"] <= -60  # a release is negative, as Hugging Face lists it
    assert trace.cumulative_top[0].source.startswith("block = torch.ones(64")
    assert trace.cumulative_lowest[-1].source == "del block"
    assert trace.cumulative_lowest[-1].cpu_mb <= -60
    # releases are left out of the total, as Hugging Face's ignore_released_memory
    assert trace.total_increase_mb >= 60
    assert trace.total_increase_mb >= sum(max(0, c) for _, c, _ in trace.sequential) - 0.01
