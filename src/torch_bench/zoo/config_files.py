"""Reading a compile configuration file (`--config` of the compile suite): our layout
(zoo/config.py) or PyTorch dynamo's own `torchbench.yaml` as it is (zoo/dynamo_yaml.py)."""

from __future__ import annotations

from torch_bench.yamlfile import read_yaml
from torch_bench.zoo.config import CompileConfig, parse_compile_config
from torch_bench.zoo.dynamo_yaml import is_dynamo_layout, parse_dynamo_config


def load_compile_config(path: str) -> CompileConfig:
    """Our layout, or dynamo's own `torchbench.yaml` as it is (`zoo.dynamo_yaml`)."""
    data = read_yaml(path, "compile configuration file")
    if is_dynamo_layout(data):
        return parse_dynamo_config(data, path)
    return parse_compile_config(data, path)
