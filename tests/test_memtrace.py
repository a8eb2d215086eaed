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


def test_the_trace_formats_as_lines_naming_file_line_and_source():
    kept.clear()
    trace = trace_memory(allocate_known_amounts, include=[__file__], top=1).to_dict()
    lines = format_memory_trace(trace, "tiny step")
    assert lines[0].startswith("memory trace: tiny step (RSS +")
    assert "test_memtrace.py:" in lines[1] and "torch.ones(96" in lines[1]
    assert len(lines) == 2
    kept.clear()
