"""Benchmark names of the kinds real imports bring, one list per tool, for the dashboard's
tests."""

GO = [f"BenchmarkFib{n}-8" for n in (1, 2, 3, 10, 20, 40)] + ["BenchmarkSortLargeSlice/n=1000000-8"]
RUST = ["fib/10", "fib/20", "fib 20", "sort/large/1000000", "sort/large/100"]
JMH = ["org.openjdk.jmh.samples.JMHSample_01_HelloWorld.measureX",
       "org.openjdk.jmh.samples.JMHSample_02_BenchmarkModes.measureThroughput",
       "org.openjdk.jmh.samples.JMHSample_02_BenchmarkModes.measureAvgTime",
       "org.openjdk.jmh.samples.JMHSample_03_States.measureShared",
       "org.openjdk.jmh.samples.JMHSample_03_States.measureUnshared"]
PYTEST = [f"tests/test_throughput.py::test_case_{i:03d}[{param}]"
          for i in range(12) for param in ("cpu-64", "cpu-128")]
CATCH2 = ["Fibonacci 20", "Fibonacci 25", "Fibonacci 30",
          "vector<int> push_back 1000000 elements with reserve",
          "vector<int> push_back 1000000 elements without reserve"]
DOTNET = ["MyCompany.Perf.Serializers.JsonBench.Serialize(size: 1)",
          "MyCompany.Perf.Serializers.JsonBench.Serialize(size: 100)",
          "MyCompany.Perf.Serializers.JsonBench.Deserialize(size: 1)",
          "MyCompany.Perf.Serializers.JsonBench.Deserialize(size: 100)"]
