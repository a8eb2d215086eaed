"""ResNet-18 and ResNet-50 as in "Deep Residual Learning for Image Recognition" (He et al.,
2015), with the layout torchvision uses (stride on the 3x3 convolution of a bottleneck,
"ResNet v1.5"), so figures compare with torchvision's models. torchvision's own models are
used when it is importable; this implementation otherwise. Scriptable by TorchScript.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

# name -> (block kind, blocks per stage)
ARCHITECTURES: dict[str, tuple[str, tuple[int, int, int, int]]] = {
    "resnet18": ("basic", (2, 2, 2, 2)),
    "resnet50": ("bottleneck", (3, 4, 6, 3)),
}


def _conv3x3(inputs: int, outputs: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)


def _conv1x1(inputs: int, outputs: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(inputs, outputs, 1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inputs: int, width: int, stride: int, shortcut: nn.Module | None):
        super().__init__()
        self.conv1 = _conv3x3(inputs, width, stride)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = _conv3x3(width, width)
        self.bn2 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = shortcut if shortcut is not None else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.downsample(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inputs: int, width: int, stride: int, shortcut: nn.Module | None):
        super().__init__()
        self.conv1 = _conv1x1(inputs, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = _conv3x3(width, width, stride)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = _conv1x1(width, width * self.expansion)
        self.bn3 = nn.BatchNorm2d(width * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = shortcut if shortcut is not None else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + self.downsample(x))


BLOCKS = {"basic": BasicBlock, "bottleneck": Bottleneck}


class ResNet(nn.Module):
    def __init__(self, block: str, layers: tuple[int, int, int, int], num_classes: int = 1000):
        super().__init__()
        block_class = BLOCKS[block]
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._stage(block_class, 64, layers[0], stride=1)
        self.layer2 = self._stage(block_class, 128, layers[1], stride=2)
        self.layer3 = self._stage(block_class, 256, layers[2], stride=2)
        self.layer4 = self._stage(block_class, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block_class.expansion, num_classes)
        self._initialise()

    def _stage(self, block_class, width: int, count: int, stride: int) -> nn.Sequential:
        outputs = width * block_class.expansion
        shortcut = None
        if stride != 1 or self.inplanes != outputs:
            shortcut = nn.Sequential(_conv1x1(self.inplanes, outputs, stride),
                                     nn.BatchNorm2d(outputs))
        blocks = [block_class(self.inplanes, width, stride, shortcut)]
        self.inplanes = outputs
        blocks += [block_class(outputs, width, 1, None) for _ in range(1, count)]
        return nn.Sequential(*blocks)

    def _initialise(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet(name: str, prefer_torchvision: bool = True) -> nn.Module:
    """ResNet `name` (resnet18 or resnet50) with random weights: torchvision's when it is
    importable and preferred, else this module's."""
    if name not in ARCHITECTURES:
        raise ValueError(f"unknown ResNet {name!r}; known: {', '.join(ARCHITECTURES)}")
    if prefer_torchvision:
        try:
            import torchvision.models as tv_models

            return getattr(tv_models, name)(weights=None)
        except Exception:  # not installed, or built for another torch
            pass
    block, layers = ARCHITECTURES[name]
    return ResNet(block, layers)


def resnet_source(prefer_torchvision: bool = True) -> str:
    """Which implementation `resnet` returns here: torchvision or torch_bench."""
    if prefer_torchvision:
        try:
            import torchvision.models  # noqa: F401

            return "torchvision"
        except Exception:
            pass
    return "torch_bench"
