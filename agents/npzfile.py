"""Reading a ``.npz`` file that someone else may have written: checked from its index first.

`read_npz(path, expected, max_bytes, what)` refuses, in one line naming the file, before
it decompresses or allocates anything big:

* a file that is not a zip archive, or whose members are not exactly the expected arrays;
* members whose uncompressed sizes (from the zip index, which bounds what is decompressed)
  add up to more than `max_bytes`;
* an array header that does not parse, an object dtype (a pickle), a dtype of the wrong
  kind, or a shape that does not fit the expected one.

``expected`` maps each array's name to ``(kinds, shape)``: the dtype kinds allowed
(``"f"`` float, ``"i"`` signed, ``"u"`` unsigned, ``"b"`` bool, ``"U"`` text) and the
shape, where an entry is an int (that length), None (any length) or a str (a length that
must be the same wherever the same str appears). The checks that need the values
(finite numbers, ranges) are the caller's.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np


def read_npz(path, expected: dict[str, tuple[str, tuple]], max_bytes: int, what: str, optional: frozenset = frozenset(),
             headers_only: bool = False, only: frozenset | None = None) -> dict:
    """The arrays of `path`, checked as the module docstring says; ValueError otherwise. Arrays
    named in `optional` may be absent. With `headers_only`, nothing past the array headers is
    read, and each array's (dtype, shape) is returned in its place. With `only`, every header is
    checked and just those arrays are read (a caller checking values one column at a time)."""
    p = Path(path)

    def refuse(problem: str):
        raise ValueError(f"{what} {path}: {problem}")

    if not p.is_file():
        refuse("no such file")
    try:
        archive = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        refuse(f"not an .npz file ({type(e).__name__}: {e})")
    with archive:
        infos = {i.filename: i for i in archive.infolist()}
        names = {n[:-4] if n.endswith(".npy") else n for n in infos}
        if not set(expected) - set(optional) <= names <= set(expected) or len(names) != len(infos):
            missing, extra = sorted(set(expected) - set(optional) - names), sorted(names - set(expected))
            refuse("expected the arrays " + ", ".join(sorted(expected))
                   + (f"; missing {', '.join(missing)}" if missing else "") + (f"; unknown {', '.join(extra)}" if extra else ""))
        total = sum(i.file_size for i in infos.values())
        if total > max_bytes:
            refuse(f"its arrays take {total:,} bytes uncompressed, more than the {max_bytes:,} bytes such a file can need")
        lengths: dict[str, int] = {}
        out = {}
        for name, (kinds, shape) in expected.items():
            if name not in names:
                continue
            try:
                with archive.open(f"{name}.npy") as f:
                    version = np.lib.format.read_magic(f)
                    if version not in ((1, 0), (2, 0)):
                        refuse(f"{name} is in .npy format {version[0]}.{version[1]}, expected 1.0 or 2.0")
                    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                    got_shape, fortran, dtype = header(f)
                    if dtype.hasobject:
                        refuse(f"{name} holds Python objects (a pickle), refused unread")
                    if dtype.kind not in kinds:
                        refuse(f"{name} has dtype {dtype}, expected one of kind {', '.join(kinds)}")
                    if len(got_shape) != len(shape):
                        refuse(f"{name} has shape {got_shape}, expected {len(shape)} dimensions")
                    for axis, (want, got) in enumerate(zip(shape, got_shape)):
                        if isinstance(want, str):
                            want = lengths.setdefault(want, got)
                        if want is not None and got != want:
                            refuse(f"{name} has shape {got_shape}; dimension {axis} should be {want}")
                    size = int(np.prod(got_shape, dtype=np.int64)) * dtype.itemsize
                    if size > max_bytes:
                        refuse(f"{name} has shape {got_shape}, more than the {max_bytes:,} bytes such a file can need")
                    if headers_only or (only is not None and name not in only):
                        if headers_only:
                            out[name] = (dtype, got_shape)
                        continue
                    raw = f.read(size)
                    if len(raw) != size:
                        refuse(f"{name} is cut short ({len(raw):,} of {size:,} bytes)")
                    out[name] = np.frombuffer(raw, dtype).reshape(got_shape, order="F" if fortran else "C").copy()
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
                if str(e).startswith(f"{what} {path}:"):
                    raise
                refuse(f"{name} does not read as an array ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
    return out
