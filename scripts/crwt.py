"""Cerium's weight-file format (include/cerium/io/weights.hpp), version 2, in pure Python (no numpy, no torch).

    "CRWT" | version u32 (2) | tensor count u32 | per tensor: name length u32, name bytes, element type u32
    (1: f64, 2: f32), dimension count u32, dimensions u64 each, values | FNV-1a 64 of every byte before it.

Little-endian throughout; tensors in name order (the order of the C++ writer's std::map). A tensor's values are
given as raw little-endian bytes of the element type, so f32 tensors from a safetensors file are copied as they are.
"""

import os
import struct

F64 = 1
F32 = 2
_SIZE = {F64: 8, F32: 4}


def f64_bytes(values):
    return struct.pack(f"<{len(values)}d", *values)


def f32_bytes(values):
    return struct.pack(f"<{len(values)}f", *values)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def to_bytes(tensors):
    """tensors: {name: (dims, element_type, raw bytes)} -> the file's bytes."""
    out = bytearray(b"CRWT") + struct.pack("<II", 2, len(tensors))
    for name in sorted(tensors):
        dims, element_type, raw = tensors[name]
        count = 1
        for d in dims:
            count *= d
        if element_type not in _SIZE or len(raw) != count * _SIZE[element_type]:
            raise ValueError(f"tensor {name}: {len(raw)} bytes for dimensions {dims} of element type {element_type}")
        encoded = name.encode()
        out += struct.pack("<I", len(encoded)) + encoded + struct.pack("<II", element_type, len(dims))
        out += struct.pack(f"<{len(dims)}Q", *dims)
        out += raw
    out += struct.pack("<Q", fnv1a64(out))
    return bytes(out)


def write(path, tensors):
    """Through a temporary file and a rename: an interrupted run leaves no partial file under the name."""
    path = os.fspath(path)
    with open(path + ".partial", "wb") as f:
        f.write(to_bytes(tensors))
    os.replace(path + ".partial", path)
