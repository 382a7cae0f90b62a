#!/usr/bin/env python3
"""Trains the ResNet of nn/resnet.hpp on Fashion-MNIST with its polynomial ReLU, and writes the weights in
Cerium's weight-file format (io/weights.hpp) with the names nn::ResNet::from_weights reads.

Run on the GPU machine (PyTorch with CUDA); the data are the Debian package dataset-fashion-mnist's IDX files
(copied next to the script's working tree when the package is not installed there):

    python3 scripts/train_resnet.py --data-dir /usr/share/datasets/fashion-mnist --epochs 12 \
        --out models/resnet20_fashion_mnist.crwt

Images are padded from 28x28 to 32x32 and copied to 3 channels (the CIFAR shape of ResNet-20). The activation is
the same Chebyshev interpolant of max(x, 0) on [-bound, bound] that nn::Relu::interpolated(bound, degree) builds
(first-kind Chebyshev nodes), so the encrypted model computes the polynomial the network was trained with; a
penalty keeps pre-activations inside [-bound, bound], where the polynomial is valid. The log (per epoch: loss,
train and test accuracy with the polynomial; the largest pre-activation) is written next to the weights as JSON.
"""

import argparse
import gzip
import json
import math
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    rank = data[3]
    dims = struct.unpack(">" + "I" * rank, data[4 : 4 + 4 * rank])
    body = data[4 + 4 * rank :]
    if len(body) != math.prod(dims):
        raise ValueError(f"{path}: {len(body)} bytes for dimensions {dims}")
    return torch.frombuffer(bytearray(body), dtype=torch.uint8).reshape(dims)


def load_split(data_dir, split):
    images = read_idx(f"{data_dir}/{split}-images-idx3-ubyte.gz").float() / 255.0
    labels = read_idx(f"{data_dir}/{split}-labels-idx1-ubyte.gz").long()
    images = F.pad(images, (2, 2, 2, 2))  # 28x28 -> 32x32
    return images.unsqueeze(1).repeat(1, 3, 1, 1), labels


def chebyshev_relu_coefficients(degree, bound):
    """c_0 .. c_degree of the interpolant of max(x, 0) on [-bound, bound] at the degree + 1 Chebyshev nodes."""
    nodes = degree + 1
    values = [max(bound * math.cos(math.pi * (k + 0.5) / nodes), 0.0) for k in range(nodes)]
    c = []
    for i in range(nodes):
        s = sum(values[k] * math.cos(math.pi * i * (k + 0.5) / nodes) for k in range(nodes))
        c.append(s * (1.0 if i == 0 else 2.0) / nodes)
    return c


class PolyReLU(nn.Module):
    def __init__(self, degree, bound):
        super().__init__()
        self.bound = bound
        self.register_buffer("c", torch.tensor(chebyshev_relu_coefficients(degree, bound), dtype=torch.float64))
        self.excess = 0.0  # the range penalty, summed over every use in one forward of the network
        self.largest = 0.0

    def forward(self, x):
        self.largest = max(self.largest, float(x.detach().abs().max()))
        self.excess = self.excess + F.relu(x.abs() - self.bound).pow(2).mean()
        t = (x / self.bound).clamp(-1.0, 1.0).double()
        b1 = torch.zeros_like(t)
        b2 = torch.zeros_like(t)
        for i in range(len(self.c) - 1, 0, -1):  # Clenshaw, as circuits::chebyshev_evaluate
            b1, b2 = 2 * t * b1 - b2 + self.c[i], b1
        return (t * b1 - b2 + self.c[0]).to(x.dtype)


class Block(nn.Module):
    def __init__(self, cin, cout, stride, act):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Conv2d(cin, cout, 1, stride, 0, bias=False)
            self.shortcut_bn = nn.BatchNorm2d(cout)
        self.act = act

    def forward(self, x):
        h = self.act(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        s = self.shortcut_bn(self.shortcut(x)) if self.shortcut is not None else x
        return self.act(h + s)


class ResNet(nn.Module):
    def __init__(self, channels, blocks, classes, act):
        super().__init__()
        self.act = act
        self.stem = nn.Conv2d(3, channels[0], 3, 1, 1, bias=False)
        self.stem_bn = nn.BatchNorm2d(channels[0])
        self.stages = nn.ModuleList()
        cin = channels[0]
        for s, cout in enumerate(channels):
            stage = nn.ModuleList()
            for b in range(blocks):
                stage.append(Block(cin, cout, 2 if s > 0 and b == 0 else 1, act))
                cin = cout
            self.stages.append(stage)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        self.act.excess = 0.0  # one activation module serves every layer: its penalty restarts per forward
        x = self.act(self.stem_bn(self.stem(x)))
        for stage in self.stages:
            for block in stage:
                x = block(x)
        return self.fc(x.mean(dim=(2, 3)))


def write_weights(model, path):
    """Cerium's weight file: "CRWT", version, count, (name, dims, f64 values)..., FNV-1a 64 of all before it."""
    tensors = {}

    def conv(name, module):
        tensors[name] = module.weight.detach().double().cpu()

    def bn(prefix, module):
        tensors[prefix + "gamma"] = module.weight.detach().double().cpu()
        tensors[prefix + "beta"] = module.bias.detach().double().cpu()
        tensors[prefix + "mean"] = module.running_mean.detach().double().cpu()
        tensors[prefix + "var"] = module.running_var.detach().double().cpu()

    conv("stem.weight", model.stem)
    bn("stem.bn.", model.stem_bn)
    for s, stage in enumerate(model.stages):
        for b, block in enumerate(stage):
            p = f"stages.{s}.{b}."
            conv(p + "conv1.weight", block.conv1)
            bn(p + "bn1.", block.bn1)
            conv(p + "conv2.weight", block.conv2)
            bn(p + "bn2.", block.bn2)
            if block.shortcut is not None:
                conv(p + "shortcut.weight", block.shortcut)
                bn(p + "shortcut_bn.", block.shortcut_bn)
    tensors["fc.weight"] = model.fc.weight.detach().double().cpu()
    tensors["fc.bias"] = model.fc.bias.detach().double().cpu()

    out = bytearray(b"CRWT") + struct.pack("<II", 1, len(tensors))
    for name in sorted(tensors):  # the order of a std::map, as the C++ writer
        t = tensors[name]
        raw = name.encode()
        out += struct.pack("<I", len(raw)) + raw + struct.pack("<I", t.dim())
        out += struct.pack("<" + "Q" * t.dim(), *t.shape)
        out += struct.pack("<" + "d" * t.numel(), *t.flatten().tolist())
    h = 0xCBF29CE484222325
    for byte in out:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    out += struct.pack("<Q", h)
    with open(path, "wb") as f:
        f.write(out)


def read_weights(path):
    """The tensors of a Cerium weight file (version 1 or 2), as float64 torch tensors by name."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"CRWT":
        raise ValueError(f"{path}: not a Cerium weight file")
    version, count = struct.unpack_from("<II", data, 4)
    pos, tensors = 12, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4 : pos + 4 + length].decode()
        pos += 4 + length
        kind = "d"
        if version >= 2:  # an element type after the name: 1 f64, 2 f32
            (code,) = struct.unpack_from("<I", data, pos)
            kind = "f" if code == 2 else "d"
            pos += 4
        (rank,) = struct.unpack_from("<I", data, pos)
        dims = struct.unpack_from("<" + "Q" * rank, data, pos + 4)
        pos += 4 + 8 * rank
        n = math.prod(dims)
        values = struct.unpack_from("<" + kind * n, data, pos)
        pos += n * struct.calcsize(kind)
        tensors[name] = torch.tensor(values, dtype=torch.float64).reshape(dims)
    return tensors


def load_weights(model, path):
    """Sets the model's parameters and batch-norm statistics from write_weights' file (to fine-tune)."""
    t = read_weights(path)

    def bn(prefix, module):
        module.weight.data.copy_(t[prefix + "gamma"])
        module.bias.data.copy_(t[prefix + "beta"])
        module.running_mean.copy_(t[prefix + "mean"])
        module.running_var.copy_(t[prefix + "var"])

    model.stem.weight.data.copy_(t["stem.weight"])
    bn("stem.bn.", model.stem_bn)
    for s, stage in enumerate(model.stages):
        for b, block in enumerate(stage):
            p = f"stages.{s}.{b}."
            block.conv1.weight.data.copy_(t[p + "conv1.weight"])
            bn(p + "bn1.", block.bn1)
            block.conv2.weight.data.copy_(t[p + "conv2.weight"])
            bn(p + "bn2.", block.bn2)
            if block.shortcut is not None:
                block.shortcut.weight.data.copy_(t[p + "shortcut.weight"])
                bn(p + "shortcut_bn.", block.shortcut_bn)
    model.fc.weight.data.copy_(t["fc.weight"])
    model.fc.bias.data.copy_(t["fc.bias"])


def accuracy(model, images, labels, device, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(images), batch):
            logits = model(images[i : i + batch].to(device))
            correct += int((logits.argmax(1).cpu() == labels[i : i + batch]).sum())
    return correct / len(images)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--channels", type=int, nargs="+", default=[16, 32, 64])
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--relu-degree", type=int, default=15)
    ap.add_argument("--relu-bound", type=float, default=8.0)
    ap.add_argument("--penalty", type=float, default=1.0)
    ap.add_argument("--out", default="models/resnet20_fashion_mnist.crwt")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--init", help="a weight file to start from (fine-tuning, e.g. to another ReLU bound)")
    ap.add_argument("--train-images", type=int, default=0, help="train on the first N images only (0: all)")
    ap.add_argument("--lr", type=float, default=0.1, help="the one-cycle schedule's peak learning rate")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    train_x, train_y = load_split(args.data_dir, "train")
    test_x, test_y = load_split(args.data_dir, "t10k")
    if args.train_images > 0:
        train_x, train_y = train_x[: args.train_images], train_y[: args.train_images]
    act = PolyReLU(args.relu_degree, args.relu_bound)
    model = ResNet(args.channels, args.blocks, 10, act)
    if args.init:
        load_weights(model, args.init)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.epochs * math.ceil(len(train_x) / 128))
    log = {"args": vars(args), "epochs": []}
    for epoch in range(args.epochs):
        model.train()
        act.largest = 0.0
        start, total = time.time(), 0.0
        perm = torch.randperm(len(train_x))
        for i in range(0, len(train_x), 128):
            idx = perm[i : i + 128]
            x, y = train_x[idx].to(device), train_y[idx].to(device)
            if torch.rand(()) < 0.5:
                x = x.flip(3)
            loss = F.cross_entropy(model(x), y) + args.penalty * act.excess
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        entry = {"epoch": epoch + 1, "loss": total / len(train_x), "largest_preactivation": act.largest,
                 "test_accuracy": accuracy(model, test_x, test_y, device), "seconds": time.time() - start}
        log["epochs"].append(entry)
        print(json.dumps(entry), flush=True)
    log["train_accuracy"] = accuracy(model, train_x, train_y, device)
    log["test_accuracy"] = accuracy(model, test_x, test_y, device)
    write_weights(model.cpu(), args.out)
    with open(args.out + ".json", "w") as f:
        json.dump(log, f, indent=1)
    print(f"test accuracy {log['test_accuracy']:.4f}; weights in {args.out}")


if __name__ == "__main__":
    main()
