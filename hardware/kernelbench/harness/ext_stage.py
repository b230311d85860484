"""A candidate's extension folder, staged by the trusted side before the candidate is loaded.

Where kmcts gives the harness a view of its own, the cache of built extensions is read-only in it
(no candidate can write into another's stored build, or its own for a later evaluation). kmcts
then names two folders: KMCTS_EXTENSIONS_FROM, the candidate's folder in the cache, as its
prebuild left it, and TORCH_EXTENSIONS_DIR, a folder in the harness's private /tmp at the very
path the prebuild built at (kmcts bound the cache folder there for it). The harness copies the
first to the second, times of modification kept to the nanosecond, so torch's ninja finds every
output up to date and loads the library built ahead, while the candidate may still take its lock
and write its logs. Whatever was at that path before (a previous candidate's leftovers in a warm
harness's /tmp) is removed first. Without KMCTS_EXTENSIONS_FROM nothing is staged."""

import os
import shutil
import stat


def _remove(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)  # a file or a link planted at the path: the link itself, not its target


def stage_extensions(env):
    """Copies env's KMCTS_EXTENSIONS_FROM to its TORCH_EXTENSIONS_DIR (see above); returns the
    seconds it took, or None when there is nothing to stage."""
    source = env.get("KMCTS_EXTENSIONS_FROM")
    target = env.get("TORCH_EXTENSIONS_DIR")
    if not source or not target:
        return None
    import time
    started = time.perf_counter()
    parent = os.path.dirname(os.path.abspath(target))
    # Each folder above the target must be a real folder: a link planted there would send the
    # copy elsewhere.
    probe = parent
    while probe not in ("/", ""):
        if os.path.islink(probe):
            _remove(probe)
        probe = os.path.dirname(probe)
    os.makedirs(parent, exist_ok=True)
    _remove(target)
    if os.path.isdir(source):
        shutil.copytree(source, target, symlinks=True, copy_function=shutil.copy2)
    else:
        os.makedirs(target)
    return time.perf_counter() - started
