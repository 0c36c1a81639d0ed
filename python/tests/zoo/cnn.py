# SPDX-License-Identifier: LGPL-2.1-or-later
"""Convolutional networks of the zoo: UNet, MobileNet, ResNet, BatchNorm
in training mode."""
import torch
from torch import nn
from torch.nn import functional as F


def _gen(n: int) -> torch.Generator:
    torch.manual_seed(n)
    return torch.Generator().manual_seed(n + 1000)


# ---- UNet --------------------------------------------------------------------------

class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(4, cout),
                                 nn.SiLU(), nn.Conv2d(cout, cout, 3, padding=1),
                                 nn.GroupNorm(4, cout), nn.SiLU())

    def forward(self, x):
        return self.net(x)


class UNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.inc = DoubleConv(3, c)
        self.down1 = DoubleConv(c, 2 * c)
        self.down2 = DoubleConv(2 * c, 4 * c)
        self.up1 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.conv1 = DoubleConv(4 * c, 2 * c)
        self.up2 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.conv2 = DoubleConv(2 * c, c)
        self.outc = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(F.max_pool2d(x1, 2))
        x3 = self.down2(F.max_pool2d(x2, 2))
        u = self.conv1(torch.cat([x2, self.up1(x3)], dim=1))
        u = self.conv2(torch.cat([x1, self.up2(u)], dim=1))
        return self.outc(u)


def unet():
    g = _gen(11)
    return UNet().eval(), (torch.randn(1, 3, 16, 16, generator=g),), \
        (torch.randn(1, 3, 16, 16, generator=g),)


# ---- MobileNet: BatchNorm, depthwise convolution, Hardswish(inplace) --------------

class SqueezeExcite(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // 4, 1)
        self.fc2 = nn.Conv2d(c // 4, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))), inplace=True)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand=4):
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.block = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.Hardswish(inplace=True),
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid),
            nn.Hardswish(inplace=True), SqueezeExcite(mid),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.block(x)
        return x + y if self.use_res else y


class MobileNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.Hardswish(inplace=True))
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1), InvertedResidual(8, 16, 2),
                                    InvertedResidual(16, 16, 1), InvertedResidual(16, 24, 2))
        self.head = nn.Linear(24, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def _randomize_bn(m: nn.Module, g: torch.Generator) -> nn.Module:
    """Running statistics that are not the identity, so eval BatchNorm does work."""
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
    return m


def mobilenet():
    g = _gen(12)
    m = _randomize_bn(MobileNet(), g).eval()
    return m, (torch.randn(2, 3, 16, 16, generator=g),), (torch.randn(2, 3, 16, 16, generator=g),)


# ---- ResNet (BatchNorm eval, ReLU inplace) -------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(inplace=True))
        self.layers = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2),
                                    BasicBlock(16, 16, 1), BasicBlock(16, 32, 2))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


def resnet():
    g = _gen(13)
    m = _randomize_bn(ResNet(), g).eval()
    return m, (torch.randn(2, 3, 16, 16, generator=g),), (torch.randn(2, 3, 16, 16, generator=g),)


# ---- BatchNorm in training mode: running statistics are state ------------------------

class TrainBN(nn.Module):
    def __init__(self, c=16, depth=4):
        super().__init__()
        layers = [nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.LeakyReLU(0.1, inplace=True)]
        for i in range(depth):
            layers += [nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c),
                       nn.LeakyReLU(0.1, inplace=True) if i % 2 else nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.Conv2d(c, 4, 1))

    def forward(self, x):
        return self.net(x).mean(dim=(2, 3))


def batchnorm_train():
    g = _gen(14)
    return TrainBN().train(), (torch.randn(2, 3, 4, 4, generator=g),), \
        (torch.randn(2, 3, 4, 4, generator=g),)


MODELS = {"unet": unet, "mobilenet": mobilenet, "resnet": resnet,
          "batchnorm_train": batchnorm_train}
