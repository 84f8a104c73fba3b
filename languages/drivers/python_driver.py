# python_driver.py: the Python 3.12 session driver (languages/drivers/PROTOCOL.md).
# One namespace (a __main__ module) lives across cells; a cell's last expression
# statement is evaluated apart so that its repr() is the cell's result, and its
# rich representations (IPython's display protocol) the cell's main result.
import ast
import base64
import builtins
import importlib
import importlib.util
import io
import json
import linecache
import math
import os
import re
import signal
import sys
import tempfile
import traceback
import types
import warnings

# all imported at start, before the box (sys.path[0]) can shadow them: a user's
# traceback.py must not break the driver's error replies
# where pip installs (python.ini package_dir), under the session folder (the cwd: /box)
PKG_DIR = os.path.join(os.getcwd(), ".packages", "python")
RESULT_MAX = 1 << 20  # a repr longer than this is cut: the reply is not output
# all of a cell's rich results (PROTOCOL.md "results"): an output past it is left
# out and counted in "results_dropped" (the reply must stay under the host's 8 MiB)
RICH_MAX = 4 << 20


def setup():
    """Moves the request stream off fd 0 and keeps a private copy of fd 1 for
    replies (user code may close or redirect its own stdout)."""
    token = os.environ.pop("JUDGE_TOKEN", "")
    req = os.dup(0)
    reply = os.dup(1)
    for fd in (req, reply):
        os.set_inheritable(fd, False)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return token, os.fdopen(req, "rb", buffering=0), reply


def send(reply_fd, token, obj):
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            f.flush()
        except Exception:
            pass
    body = json.dumps(obj).encode()
    data = b"%s %d\n" % (token.encode(), len(body)) + body
    while data:
        data = data[os.write(reply_fd, data) :]


def read_exact(req, n):
    buf = b""
    while len(buf) < n:
        chunk = req.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def user_frames(tb):
    """The user's frames: from the first cell frame on, the driver's own left out
    (ast.parse before it, the SIGINT handler after it)."""
    frames = traceback.extract_tb(tb)
    first = next((i for i, f in enumerate(frames) if f.filename.startswith("<cell-")), None)
    if first is None:
        return []
    return [f for f in frames[first:] if f.filename != __file__]


def error_of(e):
    frames = user_frames(e.__traceback__)
    text = "".join(traceback.format_exception_only(type(e), e))
    if frames:
        head = "Traceback (most recent call last):\n"
        text = head + "".join(traceback.format_list(frames)) + text
    return {"name": type(e).__name__, "value": str(e), "traceback": text}


def set_env(blob):
    """The cell's own variables ("K=V\\0" each) into os.environ; returns what they
    replaced, for restore_env."""
    saved = {}
    for item in blob.split(b"\0"):
        if not item:
            continue
        key, _, value = item.decode("utf-8", "surrogateescape").partition("=")
        saved.setdefault(key, os.environ.get(key))
        os.environ[key] = value
    return saved


def restore_env(saved):
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def set_stdin(data):
    """The cell's stdin at fd level (children read it too), sys.stdin reopened."""
    if data:
        f = tempfile.TemporaryFile()  # O_TMPFILE where it works (not in gVisor)
        f.write(data)
        f.seek(0)
        os.dup2(f.fileno(), 0)
        f.close()
    else:
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    sys.stdin = open(0, "r", closefd=False, errors="surrogateescape")


# ---- rich results: IPython's display protocol, re-implemented from its
# documentation (ipython.readthedocs.io, "Rich display": the _repr_*_ methods,
# _repr_mimebundle_, and a method that returns None or (data, metadata)) ----

# the _repr_*_ methods and the MIME type each gives, in IPython's order
REPR_METHODS = (
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_pdf_", "application/pdf"),
    ("_repr_latex_", "text/latex"),
    ("_repr_json_", "application/json"),
    ("_repr_javascript_", "application/javascript"),
)
# sent as base64 (bytes from the method are encoded; a str is taken as base64)
BINARY_TYPES = ("image/png", "image/jpeg", "application/pdf")
CHART_TYPE = "e2b/chart"  # a figure's data as E2B's Result.chart (docs/e2b.md)
CHART_POINTS = 10000  # points kept of one line or scatter
CHART_ELEMENTS = 200  # lines, bars, wedges or axes kept of one chart
# pyplot's backend while the driver runs (see MatplotlibHook)
MPL_BACKEND = "judge_display_mpl"


class Display:
    """The current cell's rich outputs, in order: MIME bundles (a dict of MIME
    type -> data) with "is_main_result"."""

    outputs = []
    size = 0
    dropped = 0
    shown = set()  # the ids of figures already sent this cell

    @classmethod
    def reset(cls):
        cls.outputs, cls.size, cls.dropped, cls.shown = [], 0, 0, set()

    @classmethod
    def add(cls, bundle, main):
        n = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in bundle.values())
        if cls.size + n > RICH_MAX:
            cls.dropped += 1
            return
        cls.size += n
        bundle["is_main_result"] = main
        cls.outputs.append(bundle)


def mime_value(mime, data):
    """data as the reply carries it, or None when it is not of a usable kind."""
    if mime in BINARY_TYPES:
        if isinstance(data, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(data)).decode("ascii")
        return data.strip() if isinstance(data, str) else None
    if mime in ("application/json", CHART_TYPE) or mime.endswith("+json"):
        try:
            json.dumps(data)
        except (TypeError, ValueError):
            return None
        return data
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data if isinstance(data, str) else None


def figure_png(fig):
    """A matplotlib figure as PNG bytes (as IPython's inline backend renders it)."""
    buf = io.BytesIO()
    fig.canvas.print_figure(buf, format="png", bbox_inches="tight")
    Display.shown.add(id(fig))
    return buf.getvalue()


def chart_value(v):
    """A data value of a chart as JSON has it: numbers as floats (None for
    NaN and infinities), dates in ISO 8601, the rest (categories) as text."""
    if isinstance(v, str):
        return v
    if hasattr(v, "isoformat"):
        return v.isoformat()
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f if math.isfinite(f) else None


def chart_label(artist):
    """An artist's legend label; matplotlib's own names (_line0, _child1) are none."""
    label = artist.get_label()
    return "" if not isinstance(label, str) or label.startswith("_") else label


def chart_axis(ax, which):
    """One axis of a 2D chart: its label, the unit in the label's trailing
    parentheses or brackets, ticks, tick labels and scale (categorical and
    datetime from the axis's unit converter)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    label = axis.get_label().get_text()
    unit = re.search(r"[(\[]([^()\[\]]+)[)\]]\s*$", label)
    converter = type(getattr(axis, "converter", None)).__name__
    scale = ("categorical" if "Category" in converter
             else "datetime" if "Date" in converter else axis.get_scale())
    return {which + "_label": label, which + "_unit": unit.group(1) if unit else None,
            which + "_ticks": [chart_value(t) for t in axis.get_majorticklocs()],
            which + "_tick_labels": [t.get_text() for t in axis.get_majorticklabels()],
            which + "_scale": scale}


def tick_label_at(axis, pos):
    """The tick label standing at pos on axis (a bar's category), else pos."""
    for loc, text in zip(axis.get_majorticklocs(), axis.get_majorticklabels()):
        if abs(loc - pos) < 1e-9 and text.get_text():
            return text.get_text()
    return str(chart_value(pos))


def axes_chart(ax):
    """One axes' data in E2B's chart shapes: pie, bar, line or scatter (box
    plots and the rest: None, no chart)."""
    from matplotlib import patches
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer

    chart = {"title": ax.get_title()}
    wedges = [p for p in ax.patches if isinstance(p, patches.Wedge)]
    if wedges:
        chart.update(type="pie", elements=[
            {"label": chart_label(w), "angle": w.theta2 - w.theta1, "radius": w.r}
            for w in wedges[:CHART_ELEMENTS]])
        return chart
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    two_d = {}
    for which in ("x", "y"):
        two_d.update(chart_axis(ax, which))
    if bars:
        elements = []
        for c in bars:
            horizontal = getattr(c, "orientation", "vertical") == "horizontal"
            for r in c.patches:
                pos = r.get_y() + r.get_height() / 2 if horizontal else r.get_x() + r.get_width() / 2
                elements.append({"label": tick_label_at(ax.yaxis if horizontal else ax.xaxis, pos),
                                 "group": chart_label(c),
                                 "value": chart_value(r.get_width() if horizontal else r.get_height())})
        chart.update(type="bar", elements=elements[:CHART_ELEMENTS])
        chart.update({k: v for k, v in two_d.items() if k.endswith(("_label", "_unit"))})
        return chart
    lines = [l for l in ax.get_lines() if len(l.get_xdata()) > 0]
    if lines:
        elements = [{"label": chart_label(l), "points": [
            [chart_value(x), chart_value(y)]
            for x, y in list(zip(l.get_xdata(), l.get_ydata()))[:CHART_POINTS]]}
            for l in lines[:CHART_ELEMENTS]]
        chart.update(type="line", elements=elements, **two_d)
        return chart
    dots = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    if dots:
        elements = [{"label": chart_label(c), "points": [
            [chart_value(x), chart_value(y)] for x, y in c.get_offsets()[:CHART_POINTS]]}
            for c in dots[:CHART_ELEMENTS]]
        chart.update(type="scatter", elements=elements, **two_d)
        return chart
    return None


def figure_chart(fig):
    """The figure's data as E2B's code interpreter gives it (Result.chart):
    one axes' chart, or a superchart of each axes' when there are several.
    After figure_png: tick labels exist once the figure was drawn."""
    try:
        with warnings.catch_warnings():  # not the cell's: a masked value's
            warnings.simplefilter("ignore")
            charts = [c for c in (axes_chart(ax) for ax in fig.get_axes() if ax.get_visible()) if c]
    except Exception:
        return None
    if len(charts) <= 1:
        return charts[0] if charts else None
    title = getattr(fig, "_suptitle", None)
    return {"type": "superchart", "title": title.get_text() if title else "",
            "elements": charts[:CHART_ELEMENTS]}


def figure_bundle(fig):
    """A figure as a result: its PNG and its chart, when it has one."""
    bundle = {"image/png": mime_value("image/png", figure_png(fig))}
    chart = mime_value(CHART_TYPE, figure_chart(fig))
    if chart is not None:
        bundle[CHART_TYPE] = chart
    return bundle


def is_figure(obj):
    mod = sys.modules.get("matplotlib.figure")
    return mod is not None and isinstance(obj, mod.Figure)


def mime_bundle(obj):
    """obj's representations: text/plain (its repr) and each _repr_*_ method's
    that gives one (a method that raises or returns None gives none)."""
    bundle = {}
    if not isinstance(obj, type):  # a class's methods are not its reprs
        for meth, mime in REPR_METHODS:
            f = getattr(obj, meth, None)
            if not callable(f):
                continue
            try:
                data = f()
            except Exception:
                continue
            if isinstance(data, tuple) and len(data) == 2:
                data = data[0]
            v = mime_value(mime, data) if data is not None else None
            if v is not None:
                bundle[mime] = v
        f = getattr(obj, "_repr_mimebundle_", None)
        if callable(f):
            try:
                data = f(include=None, exclude=None)
            except Exception:
                data = None
            if isinstance(data, tuple) and len(data) == 2:
                data = data[0]
            for mime, d in (data.items() if isinstance(data, dict) else ()):
                v = mime_value(str(mime), d)
                if v is not None:
                    bundle[str(mime)] = v
        if "image/png" not in bundle and is_figure(obj):
            try:
                bundle.update(figure_bundle(obj))
            except Exception:
                pass
    if "text/plain" not in bundle:
        text = repr(obj)
        bundle["text/plain"] = text if len(text) <= RESULT_MAX else text[:RESULT_MAX] + "..."
    return bundle


def display(*objs, raw=False, **_ignored):
    """IPython's display(): each object's rich representations as a result of
    the cell (not its main one); raw=True: each object is a MIME bundle."""
    for obj in objs:
        if raw and isinstance(obj, dict):
            bundle = {}
            for mime, d in obj.items():
                v = mime_value(str(mime), d)
                if v is not None:
                    bundle[str(mime)] = v
        else:
            bundle = mime_bundle(obj)
        Display.add(bundle, False)


def show_figures(*_args, **_kwargs):
    """pyplot.show() and the end of a cell: each open figure not sent yet as a
    PNG result, then all closed (as IPython's inline backend does)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in plt.get_fignums():
        fig = plt.figure(num)
        if id(fig) in Display.shown:
            continue
        try:
            Display.add(dict(figure_bundle(fig), **{"text/plain": repr(fig)}), False)
        except Exception:
            pass
    plt.close("all")


def backend_attr(name):
    """The pyplot backend's canvas and manager: Agg's, put in the module when
    pyplot first asks (a module __getattr__, PEP 562: matplotlib is not
    imported before a cell does). pyplot makes the rest from them (matplotlib
    3.6+: new_figure_manager absent means "derive it from FigureCanvas")."""
    if name not in ("FigureCanvas", "FigureManager"):
        raise AttributeError(name)
    from matplotlib.backends import backend_agg

    backend = sys.modules[MPL_BACKEND]
    backend.FigureCanvas = backend_agg.FigureCanvasAgg
    backend.FigureManager = backend_agg.FigureManager
    return getattr(backend, name)


class MatplotlibHook:
    """When a cell first imports matplotlib, makes pyplot's backend the driver's
    (Agg, whose show() sends the figures as results). Not through MPLBACKEND,
    which the cell's own subprocesses would inherit; a user's MPLBACKEND wins."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real = spec.loader.exec_module

        def exec_module(module):
            real(module)
            if not os.environ.get("MPLBACKEND"):
                try:
                    module.rcParams["backend"] = "module://" + MPL_BACKEND
                except Exception:
                    pass

        spec.loader.exec_module = exec_module
        return spec


def setup_display():
    """display() for every module (IPython's is a builtin in a notebook), the
    pyplot backend module, and the matplotlib import hook."""
    builtins.display = display
    backend = types.ModuleType(MPL_BACKEND)
    backend.show = show_figures
    backend.__getattr__ = backend_attr
    sys.modules[MPL_BACKEND] = backend
    if "matplotlib" not in sys.modules:
        sys.meta_path.insert(0, MatplotlibHook())


def run_cell(ns, n, code):
    """Runs code in ns; returns the repr of the last expression (or None); its
    rich representations go to Display as the main result."""
    name = "<cell-%d>" % n
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    tree = ast.parse(code, name, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), ns)
    if last is None:
        return None
    value = eval(compile(last, name, "eval"), ns)
    if value is None:
        return None
    ns["_"] = value
    bundle = mime_bundle(value)
    Display.add(dict(bundle), True)
    return bundle["text/plain"]


def child_exit(out):
    """The end of a process that a cell forked (os.fork) once its copy of the
    cell is over: it must never reply nor read the next request, which are the
    driver's (a fork bomb's copies, each interrupted, would otherwise flood the
    reply stream with stale replies)."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(0 if out["status"] == "ok" else 1)


class Interrupts:
    """SIGINT stops a running cell (KeyboardInterrupt); between cells it is
    ignored, so a late interrupt never kills the driver."""

    in_cell = False

    @classmethod
    def handler(cls, signum, frame):
        if cls.in_cell:
            raise KeyboardInterrupt


def main():
    token, req, reply = setup()
    os.makedirs(PKG_DIR, exist_ok=True)
    # the cwd (/box) first, as in an interactive Python, not the drivers folder
    sys.path[0] = ""
    sys.path.insert(1, PKG_DIR)
    main_mod = types.ModuleType("__main__")
    main_mod.__builtins__ = __builtins__
    sys.modules["__main__"] = main_mod
    ns = main_mod.__dict__
    signal.signal(signal.SIGINT, Interrupts.handler)
    setup_display()
    driver_pid = os.getpid()
    send(reply, token, {"ready": True, "version": sys.version.split()[0]})
    n = 0
    while True:
        line = req.readline()
        if not line:
            return
        word, code_len, stdin_len, env_len = line.split()
        code = read_exact(req, int(code_len)).decode("utf-8", "surrogateescape")
        stdin = read_exact(req, int(stdin_len))
        saved_env = set_env(read_exact(req, int(env_len)))
        n += 1
        out = {"status": "ok", "result": None, "error": None}
        Display.reset()
        try:
            importlib.invalidate_caches()
            set_stdin(stdin)
            Interrupts.in_cell = True
            out["result"] = run_cell(ns, n, code)
            show_figures()
        except SystemExit:
            Interrupts.in_cell = False
            raise
        except BaseException as e:
            out["status"] = "error"
            out["error"] = error_of(e)
            if not isinstance(e, KeyboardInterrupt):  # a cell over its time: no drawing
                try:
                    show_figures()
                except BaseException:
                    pass
            Interrupts.in_cell = False
        Interrupts.in_cell = False
        if os.getpid() != driver_pid:
            child_exit(out)
        set_stdin(b"")
        restore_env(saved_env)
        if Display.outputs:
            out["results"] = Display.outputs
        if Display.dropped:
            out["results_dropped"] = Display.dropped
        send(reply, token, out)


if __name__ == "__main__":
    main()
