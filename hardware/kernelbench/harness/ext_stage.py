"""A candidate's extension folder, staged by the trusted side before the candidate is loaded.

Where kmcts gives the harness a view of its own, the cache of built extensions is read-only in it
(no candidate can write into another's stored build, or its own for a later evaluation). kmcts
then names two folders: KMCTS_EXTENSIONS_FROM, the candidate's folder in the cache, as its
prebuild left it, and TORCH_EXTENSIONS_DIR, a folder in the harness's private /tmp at the very
path the prebuild built at (kmcts bound the cache folder there for it). The harness copies the
first to the second, times of modification kept to the nanosecond, so torch's ninja finds every
output up to date and loads the library built ahead, while the candidate may still take its lock
and write its logs. Whatever was at that path before (a previous candidate's leftovers in a warm
harness's /tmp, modes changed, links, special files) is removed first, and the copy is removed
after the evaluation (unstage_extensions); the folder above it stays. Without KMCTS_EXTENSIONS_FROM nothing is staged."""

import os
import shutil
import stat


def _remove(path):
    """Removes `path` whatever a candidate of the same uid did to it: a folder it made
    unreadable or unwritable is given back its modes first; a link goes, never its target."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    os.chmod(path, 0o700)
    for root, dirs, _ in os.walk(path, topdown=True):  # each folder opened before it is entered
        for d in dirs:
            full = os.path.join(root, d)
            if not os.path.islink(full):
                os.chmod(full, 0o700)

    def retry(function, failed, _):
        os.chmod(os.path.dirname(failed), 0o700)
        function(failed)

    shutil.rmtree(path, onerror=retry)


def _empty(folder):
    """`folder` as a real, empty folder of mode 0700: what is in it removed, but the folder itself
    kept, since the candidates' processes started ahead may write in it by a rule that names this
    very folder (candidate_worker.guard); they cannot replace it, only what is in it."""
    if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
        os.unlink(folder)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    for name in os.listdir(folder):
        _remove(os.path.join(folder, name))


def _regular_only(folder, names):
    """What copytree leaves out: anything but folders, regular files and links (a FIFO or a
    device node would hang or fail the copy)."""
    left = []
    for name in names:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            left.append(name)
    return left


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
        if os.path.islink(probe) or (os.path.lexists(probe) and not os.path.isdir(probe)):
            _remove(probe)
        probe = os.path.dirname(probe)
    _empty(parent)  # whatever an earlier candidate left or did there
    if os.path.exists(source):
        if not os.access(source, os.R_OK | os.X_OK):
            raise PermissionError(f"the harness cannot read the candidate's built extensions: {source}")
        shutil.copytree(source, target, symlinks=True, copy_function=shutil.copy2, ignore=_regular_only)
        # The copy is the harness's own: writable (torch rewrites build.ninja, ninja its logs),
        # times kept (a mode change leaves them).
        for root, dirs, files in os.walk(target):
            for name in dirs + files:
                full = os.path.join(root, name)
                if not os.path.islink(full):
                    os.chmod(full, os.lstat(full).st_mode | stat.S_IWUSR)
    else:
        os.makedirs(target)
    return time.perf_counter() - started


def unstage_extensions(env):
    """Empties the folder above the candidate's (stage_extensions made what is in it), so that a
    warm harness's /tmp does not grow with every candidate."""
    if env.get("KMCTS_EXTENSIONS_FROM") and env.get("TORCH_EXTENSIONS_DIR"):
        _empty(os.path.dirname(os.path.abspath(env["TORCH_EXTENSIONS_DIR"])))
