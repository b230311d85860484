"""Splits a load_inline CUDA source that includes torch into two translation units, so that nvcc
never parses torch's headers (bench/results/kernelbench-builds.md: 51-65 s of nvcc for a one-kernel
source that includes torch/extension.h, about 1.5 s for its kernels alone):

- the kernels' unit, compiled by nvcc: the source without its torch includes and without its
  host functions that name torch (kernels, device functions, types, macros and torch-free host
  code stay), plus explicit instantiations of the kernel templates the host code launches;
- the host unit, compiled by the host compiler as C++ (kb_cxx.py, so with the precompiled
  torch/extension.h): torch/extension.h and cuda_runtime.h, the source's types, its host
  functions, its kernels as declarations only, and every `kernel<<<grid, block, shared,
  stream>>>(args)` written as a cudaLaunchKernel of the same kernel (the kernels' unit defines
  the host stub the runtime registered, under the kernel's own name), its arguments converted
  to the kernel's parameter types as a call converts them.

A kernel may name torch's scalar types at::Half and at::BFloat16 (c10's too): the kernels' unit
then includes their c10 headers, which bring nothing of ATen. Whatever this does not understand
(a kernel or device function that names anything else of torch, a device variable the host code
names, nvcc flags it does not know, a launch of something other than a named kernel) makes it
decline: kb_nvcc.py then compiles the source as written. A split whose units
do not build, or whose objects define the same symbol twice, is dropped the same way."""

import re

# What names torch (or its Python binding) in code: namespaces, macros.
TORCH_NAMES = re.compile(r"\b(torch|c10|ATen|caffe2|pybind11|py)\s*::|\bat\s*::|\b(TORCH|AT|C10|PYBIND11)_\w+")
# Torch's scalar types a kernel may name (at::Half in an AT_DISPATCH..._AND_HALF kernel): the
# kernels' unit then includes their own c10 headers, which bring nothing of ATen.
SCALAR_TYPES = re.compile(r"\b(?:at|c10)\s*::\s*(?:Half|BFloat16)\b")
SCALAR_HEADERS = ("#include <c10/util/Half.h>\n#include <c10/util/BFloat16.h>\n"
                  "namespace at { using c10::Half; using c10::BFloat16; }\n")
# A static variable that is not constant: each unit would hold its own.
MUTABLE_STATIC = re.compile(r"\bstatic\s+(?!const\b|constexpr\b|inline\b|__device__|__constant__|__shared__)"
                            r"(?!(?:[\w:<>,*&\s]+?)\()")
TORCH_INCLUDE = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|pybind11|Python\.h|THC)')
DEVICE_VARIABLE = re.compile(r"\b(__constant__|__device__|__managed__|__shared__)\b")
TYPE_HEAD = re.compile(r"^(typedef\s+)?(struct|class|union|enum)\b")


class Decline(Exception):
    """The source is not one this splitter can divide faithfully; the reason says why."""


def masked(text):
    """`text` with comments, string and character literals blanked (same length, newlines kept), so
    that braces, semicolons and names found in it are code."""
    out, i, n = list(text), 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise Decline("an unterminated comment")
            blank(i, j + 2)
            i = j + 2
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                raise Decline("a raw string it cannot read")
            end = text.find(")" + m.group(1) + '"', i)
            if end < 0:
                raise Decline("an unterminated raw string")
            blank(i + 1, end + len(m.group(1)) + 2)
            i = end + len(m.group(1)) + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\n":
                    raise Decline("an unterminated literal")
                j += 2 if text[j] == "\\" else 1
            if c == "'" and j - i > 12:  # a digit separator (1'000'000), not a character literal
                i += 1
                continue
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


class Item:
    """One top-level piece of a source: a directive, a declaration or definition ending in `;`, a
    function definition, or a namespace / extern "C" block with items of its own."""

    def __init__(self, kind, start, end, head=None, children=None, body=None):
        self.kind, self.start, self.end = kind, start, end
        self.head, self.children, self.body = head, children, body  # body: (open brace, close brace)


def without_template(head):
    """A header without its leading template<...> parameter lists."""
    while head.startswith("template"):
        k, depth = head.find("<"), 0
        if k < 0:
            return head
        for m in range(k, len(head)):
            depth += head[m] == "<"
            depth -= head[m] == ">"
            if depth == 0:
                head = head[m + 1:].lstrip()
                break
        else:
            return head
    return head


def matching(code, i, open_, close):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == open_:
            depth += 1
        elif code[j] == close:
            depth -= 1
            if depth == 0:
                return j
    raise Decline(f"an unbalanced '{open_}'")


def directive_end(code, i):
    while True:
        j = code.find("\n", i)
        if j < 0:
            return len(code)
        if code[j - 1] != "\\":
            return j + 1
        i = j + 1


def items(code, start, end):
    """The items of code[start:end] (masked text)."""
    out, i = [], start
    while i < end:
        while i < end and code[i].isspace():
            i += 1
        if i >= end:
            break
        if code[i] == "#":
            j = directive_end(code, i)
            out.append(Item("directive", i, min(j, end)))
            i = j
            continue
        j, paren = i, 0
        while True:
            if j >= end:
                if code[i:end].strip():
                    raise Decline("a declaration without its end")
                return out
            c = code[j]
            if c in "([":
                paren += 1
            elif c in ")]":
                paren -= 1
            elif c == "#" and (j == 0 or code[code.rfind("\n", 0, j) + 1:j].strip() == ""):
                raise Decline("a directive inside a declaration")
            elif c == ";" and paren == 0:
                out.append(Item("declaration", i, j + 1))
                i = j + 1
                break
            elif c == "{" and paren == 0:
                head = " ".join(code[i:j].split())
                close = matching(code, j, "{", "}")
                if re.match(r"^(inline\s+)?namespace\b", head) or re.match(r'^extern\s*"\s*"$', head):
                    out.append(Item("block", i, close + 1, head, items(code, j + 1, close), (j, close)))
                    i = close + 1
                    break
                outer = re.sub(r"\([^()]*\)", "", re.sub(r"\([^()]*\)", "", without_template(head)))  # no (...) or <...>
                if TYPE_HEAD.match(without_template(head)) or "=" in outer or "(" not in head:
                    j = close + 1  # a type's body or a braced initialiser: the declaration goes on to its ';'
                    continue
                out.append(Item("function", i, close + 1, head, None, (j, close)))
                i = close + 1
                break
            j += 1
    return out


class Split:
    """The two units' texts and what the host unit needs from the kernels' unit."""

    def __init__(self, device, host, kernel_templates, kernels):
        self.device, self.host = device, host
        self.kernel_templates = kernel_templates  # names of kernel templates (qualified as written)
        self.kernels = kernels  # names of every kernel
        self.scalar_types = False  # whether the kernels name at::Half or BFloat16 (their c10 headers are included)


LAUNCHER = r"""
// CUDA's keywords that only nvcc defines: on a declaration they are nothing to the host.
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __cluster_dims__
#define __cluster_dims__(...)
#endif
#ifndef __maxnreg__
#define __maxnreg__(...)
#endif
#ifndef __grid_constant__
#define __grid_constant__
#endif
#include <algorithm>  // what nvcc's implicit cuda_runtime.h brings a .cu source
#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#ifndef __CUDACC__
// cuda_runtime.h declares the forms of these that take a kernel itself only for nvcc; each casts
// the kernel to its stub's address, as those do.
template <class T> cudaError_t cudaFuncSetAttribute(T* entry, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(entry), attr, value);
}
template <class T> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, T* entry) {
  return ::cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(entry));
}
template <class T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, T* entry, int block_size, std::size_t shared) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(entry), block_size,
                                                         shared);
}
#endif
namespace kmcts_split {
// The conversions a call makes from an argument to its parameter (copy-initialisation).
template <class T> T as_parameter(T value) { return value; }
template <class... P> struct Launch {
  void (*kernel)(P...);
  dim3 grid, block;
  std::size_t shared;
  cudaStream_t stream;
  template <class... A> cudaError_t operator()(A&&... a) const {
    static_assert(sizeof...(A) == sizeof...(P), "a kernel launched with another number of arguments");
    static_assert(!(std::is_reference<P>::value || ...), "a kernel parameter by reference: nvcc passes it otherwise");
    return launch(std::index_sequence_for<P...>{}, std::tuple<P...>(as_parameter<P>(std::forward<A>(a))...));
  }
  template <std::size_t... I> cudaError_t launch(std::index_sequence<I...>, std::tuple<P...> held) const {
    void* arguments[sizeof...(P) + 1] = {static_cast<void*>(&std::get<I>(held))..., nullptr};
    return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, arguments, shared, stream);
  }
};
template <class... P>
Launch<P...> launch(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t shared = 0, cudaStream_t stream = 0) {
  return {kernel, grid, block, shared, stream};
}
}  // namespace kmcts_split
"""


def launch_spans(code, start, end):
    """(expression start, '<<<' start, '>>>' end) of each launch in code[start:end]."""
    out, i = [], start
    while True:
        i = code.find("<<<", i, end)
        if i < 0:
            return out
        j, paren = i + 3, 0
        while j < end and not (paren == 0 and code.startswith(">>>", j)):
            paren += code[j] in "([{"
            paren -= code[j] in ")]}"
            j += 1
        if j >= end:
            raise Decline("a launch without its '>>>'")
        # The kernel's expression: a name, maybe qualified, maybe with template arguments.
        k = i - 1
        while k >= start and code[k].isspace():
            k -= 1
        if code[k] == ">":
            depth = 0
            while k >= start:
                depth += code[k] == ">"
                depth -= code[k] == "<"
                if depth == 0:
                    break
                k -= 1
            k -= 1
            while k >= start and code[k].isspace():
                k -= 1
        while True:
            while k >= start and (code[k].isalnum() or code[k] == "_"):
                k -= 1
            if k >= start + 1 and code[k - 1:k + 1] == "::":
                k -= 2
                continue
            break
        if not (code[k + 1].isalpha() or code[k + 1] == "_"):
            raise Decline("a launch of something other than a named kernel")
        out.append((k + 1, i, j + 3))
        i = j + 3


def rewrite_launches(text, code, start, end):
    """text[start:end] with each launch written as a call of kmcts_split::launch."""
    pieces, at = [], start
    for expr, open_, close in launch_spans(code, start, end):
        config = text[open_ + 3:close - 3]
        pieces += [text[at:expr], "::kmcts_split::launch(", text[expr:open_].strip(), ", ", config, ")",
                   blank_lines(text[expr:open_])]  # the lines stay where they were
        at = close
    pieces.append(text[at:end])
    return "".join(pieces)


def blank_lines(text):
    return "\n" * text.count("\n")


def split(text):
    """The Split of `text` (a CUDA source as load_inline writes it); Decline when it cannot be made."""
    code = masked(text)
    device_vars, kernels, templates = [], [], []
    dev, host = [], []
    anonymous = [0]

    def both(piece):
        dev.append(piece)
        host.append(piece)

    def declaration_of(item):
        """A function definition's header as a declaration, with `static` dropped (the host unit
        must reach the kernels' unit's definition)."""
        head = text[item.start:item.body[0]].rstrip()
        return re.sub(r"(^|\s)static\s", r"\1", head) + ";" + blank_lines(text[item.body[0]:item.end])

    def function(item, prefix, piece, torch):
        head = code[item.start:item.body[0]]
        is_global, is_device, is_host = ("__global__" in head, "__device__" in head, "__host__" in head)
        if is_global or is_device:
            if torch:
                raise Decline("a kernel or device function that names torch")
            if is_global:
                header = text[item.start:item.body[0]]  # `static` off the header only, not the body's statics
                dev.append(re.sub(r"(^|\s)static(\s)", r"\1\2", header) + text[item.body[0]:item.end])
                name = "::".join(prefix + [kernel_name(head)])
                kernels.append(name)
                if head.lstrip().startswith("template"):
                    templates.append(name)
                host.append(declaration_of(item))
                return
            dev.append(piece)
            if is_host and host_definition_needed(head):
                host.append(rewrite_launches(text, code, item.start, item.end))
            elif is_host:
                host.append(declaration_of(item))
            else:
                host.append(blank_lines(piece))
        elif torch:
            if re.search(r"^\s*#", code[item.body[0]:item.end], re.M):
                raise Decline("a directive inside a host function the kernels' unit leaves out")
            dev.append(blank_lines(piece))
            host.append(rewrite_launches(text, code, item.start, item.end))
        elif host_definition_needed(head):
            if MUTABLE_STATIC.search(code[item.body[0]:item.end]):
                raise Decline("a static variable in a host function both units would define")
            dev.append(piece)
            host.append(rewrite_launches(text, code, item.start, item.end))
        else:  # a torch-free host function (a launcher): the kernels' unit defines it
            dev.append(piece)
            host.append(declaration_of(item))

    def declaration(piece, part, torch):
        if DEVICE_VARIABLE.search(part) and "__global__" not in part:
            if torch:
                raise Decline("a device declaration that names torch")
            name = re.search(r"([A-Za-z_]\w*)\s*(\[[^;]*\])?\s*(=[^;]*)?;\s*$", part)
            if "(" not in part.split("=")[0] and name:
                device_vars.append(name.group(1))
            dev.append(piece)
            host.append(blank_lines(piece))
        elif torch:
            dev.append(blank_lines(piece))
            host.append(piece)
        else:
            if MUTABLE_STATIC.match(part.strip()) and "(" not in part.split("=")[0]:
                raise Decline("a static variable both units would hold a copy of")
            both(piece)

    def walk(its, start, end, prefix):
        cursor = start
        for item in its:
            both(text[cursor:item.start])
            cursor = item.end
            piece, part = text[item.start:item.end], code[item.start:item.end]
            torch = TORCH_NAMES.search(SCALAR_TYPES.sub(" ", part)) is not None
            if item.kind == "directive":
                if TORCH_INCLUDE.match(piece.strip()) or torch:  # torch's headers, macros that use torch
                    dev.append(blank_lines(piece))
                    host.append(piece)
                else:
                    both(piece)
            elif item.kind == "block":
                opening = text[item.start:item.body[0] + 1]
                name, suffix = None, ""
                if re.fullmatch(r"(inline\s+)?namespace", item.head):  # anonymous: named, then used
                    anonymous[0] += 1
                    name = f"kmcts_anonymous_{anonymous[0]}"
                    opening = f"namespace {name} {{" + blank_lines(opening)
                    suffix = f" using namespace {name};"
                elif item.head.startswith(("namespace", "inline")):
                    name = item.head.split()[-1]
                both(opening)
                walk(item.children, item.body[0] + 1, item.body[1], prefix + ([name] if name else []))
                both(text[item.body[1]:item.end] + suffix)
            elif item.kind == "function":
                function(item, prefix, piece, torch)
            else:
                declaration(piece, part, torch)
        both(text[cursor:end])

    if re.search(r"\b__(CUDACC|NVCC)\w*", text):
        raise Decline("code that asks whether nvcc compiles it (__CUDACC__, __NVCC__): the host unit is not")
    walk(items(code, 0, len(code)), 0, len(text), [])
    if not kernels:
        raise Decline("no kernel")
    host_code = masked("".join(host))
    for var in device_vars:
        if re.search(rf"\b{re.escape(var)}\b", host_code):
            raise Decline(f"the host code names the device variable {var}")
    device_text, host_text = "".join(dev), "".join(host)
    if TORCH_NAMES.search(SCALAR_TYPES.sub(" ", masked(device_text))):
        raise Decline("the kernels' unit still names torch")
    parts = Split(device_text, host_text, templates, kernels)
    parts.scalar_types = SCALAR_TYPES.search(masked(device_text)) is not None
    return parts


def kernel_name(head):
    """The name before a kernel header's parameter list (its last parenthesised group)."""
    close = head.rstrip().rfind(")")
    if close < 0:
        raise Decline("a kernel whose name it cannot read")
    depth, k = 0, close
    while k >= 0:
        depth += head[k] == ")"
        depth -= head[k] == "("
        if depth == 0:
            break
        k -= 1
    m = re.search(r"([A-Za-z_]\w*)\s*$", head[:k])
    if not m or m.group(1) in ("__launch_bounds__", "__global__"):
        raise Decline("a kernel whose name it cannot read")
    return m.group(1)


def host_definition_needed(head):
    """A function the host unit must define itself: a template, inline, static or constexpr one
    (each unit keeps its own copy; no symbol is defined twice)."""
    return re.search(r"\b(template|inline|static|constexpr|__forceinline__)\b", head) is not None


def host_unit(split_, source_name):
    """The host unit's text: torch/extension.h first (kb_cxx.py precompiles it), cuda_runtime.h,
    the launcher, then the host side with #line directives keeping the source's lines."""
    return ("#include <torch/extension.h>\n#include <cuda_runtime.h>\n" + LAUNCHER +
            f'#line 1 "{source_name}"\n' + split_.host)


def device_unit(split_, source_name, instantiations=()):
    scalar = split_.scalar_types or any(SCALAR_TYPES.search(i) for i in instantiations)  # a template over Half
    return ((SCALAR_HEADERS if scalar else "") + f'#line 1 "{source_name}"\n' + split_.device + "\n" +
            "".join(f"template __global__ {signature};\n" for signature in instantiations))


def instantiations(split_, undefined):
    """The explicit instantiations the kernels' unit needs for the host unit's undefined symbols
    (demangled), one per kernel template instance; other symbols are not this split's."""
    out = []
    for symbol in undefined:
        for name in split_.kernel_templates:
            if re.match(rf"^void {re.escape(name)}<.*>\(.*\)$", symbol):
                out.append(symbol)
    return sorted(set(out))
