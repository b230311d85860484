"""Per-launch kernel sums of a side's timed calls (issue 30, item 1): the rows of
hardware/cuda/kernel_table.hpp (name, grid, block, registers, shared and local memory; calls
and ns inside the windows), as kmcts_kb_timer_kernel_table gives one sample's. The trusted
side sums what a block's reply carries; a candidate's rows come from its own process, so they
are checked (shape and bounds) and feed the prompts' profile only, never a verdict: a bad table
costs the profile, not the candidate."""

MAX_ROWS = 64          # as KernelTable::kMaxRows: the last row is kept for "(other)"
MAX_NAME = 512
KEY = ("name", "grid", "block", "registers", "smem_static", "smem_dynamic", "local_bytes")
OTHER = ("(other)", (0, 0, 0), (0, 0, 0), 0, 0, 0, 0)


def _key(row):
    """A row's launch, checked: ValueError on anything but the shape the timer writes."""
    if not isinstance(row, dict):
        raise ValueError("a kernel table row that is not an object")
    name = row.get("name")
    if not isinstance(name, str) or len(name) > MAX_NAME:
        raise ValueError("a kernel table row without a name of at most 512 characters")
    dims = []
    for field in ("grid", "block"):
        d = row.get(field)
        if not (isinstance(d, list) and len(d) == 3 and all(type(v) is int and v >= 0 for v in d)):
            raise ValueError(f"a kernel table row whose {field} is not three counts")
        dims.append(tuple(d))
    counts = []
    for field in ("registers", "smem_static", "smem_dynamic", "local_bytes", "calls", "ns"):
        v = row.get(field)
        if type(v) is not int or v < 0:
            raise ValueError(f"a kernel table row whose {field} is not a count")
        counts.append(v)
    return (name, dims[0], dims[1], *counts[:4]), counts[4], counts[5]


class KernelTable:
    def __init__(self):
        self.rows = {}      # launch key -> [calls, ns]
        self.samples = 0    # timed calls summed
        self.error = None   # why a reply's table was refused (the profile is then left out)

    def add(self, rows, samples=1):
        """Adds one sample's (or a block's) rows; ValueError on a malformed table."""
        if not isinstance(rows, list) or len(rows) > MAX_ROWS:
            raise ValueError("a kernel table that is not a list of at most 64 rows")
        checked = [_key(r) for r in rows]
        for key, calls, ns in checked:
            if key not in self.rows and key != OTHER and len(self.rows) - (OTHER in self.rows) >= MAX_ROWS - 1:
                key = OTHER
            got = self.rows.setdefault(key, [0, 0])
            got[0] += calls
            got[1] += ns
        self.samples += samples

    def add_reply(self, rows, samples):
        """A reply's table from a process we do not trust: refused whole on any fault."""
        if self.error is not None:
            return
        try:
            self.add(rows, samples)
        except ValueError as e:
            self.error = str(e)

    def to_json(self):
        return [dict(zip(KEY, (k[0], list(k[1]), list(k[2]), *k[3:])), calls=c, ns=ns)
                for k, (c, ns) in sorted(self.rows.items())]


def tables_report(candidate, reference):
    """The result's "kernel_tables" (kernel_profile.hpp builds the profile from it), or None
    when either side's table was refused or no kernels were recorded (the CPU stand-in)."""
    if candidate.error or reference.error or not (candidate.rows or reference.rows):
        return {"error": candidate.error or reference.error} if (candidate.error or reference.error) else None
    return {"candidate": candidate.to_json(), "reference": reference.to_json(),
            "samples_candidate": candidate.samples, "samples_reference": reference.samples}
