// csharp_driver.cs: the C# session driver (languages/drivers/PROTOCOL.md), Roslyn
// scripting on .NET 9. languages/install-csharp.sh compiles it with the Roslyn
// scripting packages into $runtimes/dotnet9/session/csharp_driver.dll.
//
// How it works: the first script (a warm-up, run before the ready reply so
// that Roslyn's JIT cost is paid at start) makes a ScriptState; every cell is
// ContinueWithAsync on the last state, so its variables, methods, classes and
// usings persist. A cell runs on a thread of its own while the main thread
// waits: SIGINT (PosixSignalRegistration) cancels the cell's token and
// interrupts that thread, which ends a cell that sleeps, waits or awaits. A
// busy loop cannot be stopped in .NET (no Thread.Abort): the driver then gives
// no reply and the host kills and restarts it, as PROTOCOL.md allows.
using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Scripting;
using Microsoft.CodeAnalysis.CSharp.Scripting.Hosting;
using Microsoft.CodeAnalysis.Scripting;
using Microsoft.CodeAnalysis.Scripting.Hosting;

static class CSharpDriver
{
	const int F_DUPFD_CLOEXEC = 1030;
	const int EINTR = 4;
	const int ResultMax = 1 << 20; // a result longer than this is cut: the reply is not output

	[DllImport("libc", SetLastError = true)]
	static extern int fcntl(int fd, int cmd, int arg);
	[DllImport("libc", SetLastError = true)]
	static extern int dup2(int oldfd, int newfd);
	[DllImport("libc", SetLastError = true)]
	static extern int open([MarshalAs(UnmanagedType.LPStr)] string path, int flags);
	[DllImport("libc", SetLastError = true)]
	static extern int close(int fd);
	[DllImport("libc", SetLastError = true)]
	static extern nint read(int fd, ref byte buf, nint count);
	[DllImport("libc", SetLastError = true)]
	static extern nint write(int fd, ref byte buf, nint count);

	static readonly string[] Imports = {
		"System", "System.Collections.Generic", "System.IO", "System.Linq", "System.Net.Http",
		"System.Text", "System.Threading", "System.Threading.Tasks",
	};

	static int reqFd, replyFd;
	static string token = "";
	static byte[] reqBuf = new byte[1 << 16];
	static int reqStart, reqEnd;

	// the cell in flight, for the SIGINT handler
	static volatile Thread? cellThread;
	static volatile bool interrupted;
	static CancellationTokenSource cts = new();
	static PosixSignalRegistration? sigint;

	static int Main()
	{
		token = Environment.GetEnvironmentVariable("JUDGE_TOKEN") ?? "";
		Environment.SetEnvironmentVariable("JUDGE_TOKEN", null);
		// requests off fd 0 and a private copy of fd 1 for replies (user code
		// may close or redirect its own stdout); /dev/null on fd 0
		reqFd = fcntl(0, F_DUPFD_CLOEXEC, 10);
		replyFd = fcntl(1, F_DUPFD_CLOEXEC, 10);
		if (reqFd < 0 || replyFd < 0) {
			Console.Error.WriteLine("csharp_driver: cannot duplicate fd 0 or 1");
			return 2;
		}
		int nul = open("/dev/null", 0);
		if (nul >= 0) {
			dup2(nul, 0);
			if (nul != 0)
				close(nul);
		}
		var utf8 = new UTF8Encoding(false);
		Console.SetOut(new StreamWriter(Console.OpenStandardOutput(), utf8) { AutoFlush = true });
		Console.SetError(new StreamWriter(Console.OpenStandardError(), utf8) { AutoFlush = true });
		Console.SetIn(new StringReader(""));

		// between cells SIGINT does nothing; in a cell it interrupts it
		sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, ctx => {
			ctx.Cancel = true;
			var t = cellThread;
			if (t == null)
				return;
			interrupted = true;
			cts.Cancel();
			try {
				t.Interrupt();
			} catch (Exception) {
				// the thread ended meanwhile
			}
		});

		string dir = Directory.GetCurrentDirectory();
		var options = ScriptOptions.Default
			.WithReferences(FrameworkReferences())
			.WithImports(Imports)
			.WithOptimizationLevel(OptimizationLevel.Release)
			.WithEmitDebugInformation(true)
			.WithFileEncoding(utf8)
			.WithAllowUnsafe(true)
			.WithMetadataResolver(ScriptMetadataResolver.Default.WithBaseDirectory(dir)
				.WithSearchPaths(FrameworkDir))
			.WithSourceResolver(new SourceFileResolver(ImmutableArray<string>.Empty, dir));

		// warm-up: a chain of its own (the user never sees its variables) that
		// compiles, runs, awaits, prints, throws and formats once
		var warm = options.WithFilePath("warm-up");
		var w = CSharpScript.RunAsync("int w = 1; Console.Out.Write(\"\"); Console.Error.Write(\"\");", warm)
			.GetAwaiter().GetResult();
		w = w.ContinueWithAsync("var v = await Task.FromResult(w); new[] { v, 2 }.Select(x => x.ToString()).ToList()",
			warm).GetAwaiter().GetResult();
		Format(w.ReturnValue);
		w = w.ContinueWithAsync("void F() => throw new Exception(\"w\"); F();", warm, _ => true)
			.GetAwaiter().GetResult();
		ErrorOf(w.Exception!, "");
		var state = CSharpScript.RunAsync("", options.WithFilePath("start")).GetAwaiter().GetResult();

		Send("{\"ready\": true, \"version\": " + Json(Environment.Version.ToString()) + "}");
		for (int n = 1;; n++) {
			string? line = ReadLine();
			if (line == null)
				return 0;
			var words = line.Split(' ');
			// the env count is optional: the driver is installed once under
			// /opt/judge and may meet a host of the protocol without it
			int elen = 0;
			if (words.Length < 3 || words.Length > 4 || words[0] != "CELL" ||
				!int.TryParse(words[1], out int clen) || !int.TryParse(words[2], out int slen) ||
				(words.Length == 4 && !int.TryParse(words[3], out elen)) || clen < 0 || slen < 0 ||
				elen < 0) {
				Console.Error.WriteLine("csharp_driver: bad request line");
				return 2;
			}
			byte[]? code = ReadExact(clen), stdin = ReadExact(slen), env = ReadExact(elen);
			if (code == null || stdin == null || env == null)
				return 0;
			var saved = SetEnv(env);
			Console.SetIn(new StringReader(Encoding.UTF8.GetString(stdin)));
			string reply = RunCell(ref state, options.WithFilePath($"cell-{n}"),
				Encoding.UTF8.GetString(code), dir);
			Console.SetIn(new StringReader(""));
			foreach (var (key, value) in saved)
				Environment.SetEnvironmentVariable(key, value);
			try {
				Console.Out.Flush();
				Console.Error.Flush();
			} catch (Exception) {
				// the user's own writer (Console.SetOut) failed: the reply still goes out
			}
			Send(reply);
		}
	}

	// The cell's own variables ("K=V\0" each) into the environment; returns what
	// they replaced (null: unset), to put back after the cell.
	static List<(string, string?)> SetEnv(byte[] blob)
	{
		var saved = new List<(string, string?)>();
		foreach (var item in Encoding.UTF8.GetString(blob).Split('\0')) {
			int eq = item.IndexOf('=');
			if (eq < 1)
				continue;
			string key = item[..eq];
			saved.Insert(0, (key, Environment.GetEnvironmentVariable(key)));
			Environment.SetEnvironmentVariable(key, item[(eq + 1)..]);
		}
		return saved;
	}

	// The framework assemblies a script compiles against. Not all of the ~170:
	// Roslyn binds every cell against every reference and keeps each cell's
	// compilation, so memory grows with references x cells (150 cells: 94 MB
	// of heap with all, 29 MB with these). Others: #r "System.Xyz.dll".
	static readonly HashSet<string> Assemblies = new() {
		"mscorlib", "netstandard", "System.Private.CoreLib", "System.Runtime", "System.Private.Uri",
		"System.Console", "System.Collections", "System.Collections.Concurrent",
		"System.Collections.Immutable", "System.Collections.Specialized", "System.Collections.NonGeneric",
		"System.ComponentModel.Primitives", "System.Diagnostics.Debug", "System.Diagnostics.Process",
		"System.IO", "System.IO.Compression", "System.IO.FileSystem", "System.Linq",
		"System.Linq.Expressions", "System.Linq.Parallel", "System.Memory", "System.Net.Http",
		"System.Net.Primitives", "System.Numerics.Vectors", "System.ObjectModel",
		"System.Runtime.Extensions", "System.Runtime.InteropServices", "System.Runtime.Numerics",
		"System.Security.Cryptography", "System.Text.Encoding.Extensions", "System.Text.Json",
		"System.Text.RegularExpressions", "System.Threading", "System.Threading.Tasks",
		"System.Threading.Tasks.Parallel", "System.Threading.Thread", "System.Web.HttpUtility",
		"System.Private.Xml", "System.Private.Xml.Linq", "System.Xml.ReaderWriter", "System.Xml.Linq",
	};

	static string FrameworkDir => Path.GetDirectoryName(typeof(object).Assembly.Location)!;

	static IEnumerable<MetadataReference> FrameworkReferences()
	{
		string fw = FrameworkDir;
		var tpa = (AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES") as string ?? "").Split(':');
		return tpa.Where(p => Path.GetDirectoryName(p) == fw &&
					 Assemblies.Contains(Path.GetFileNameWithoutExtension(p)))
			.Select(p => (MetadataReference)MetadataReference.CreateFromFile(p));
	}

	static string RunCell(ref ScriptState<object> state, ScriptOptions options, string code, string dir)
	{
		var before = state;
		ScriptState<object>? after = null;
		Exception? failure = null;
		interrupted = false;
		cts = new CancellationTokenSource();
		var token = cts.Token;
		var t = new Thread(() => {
			try {
				after = before.ContinueWithAsync(code, options, _ => true, token).GetAwaiter().GetResult();
			} catch (Exception e) {
				failure = e;
			}
		}, 64 << 20);
		cellThread = t;
		t.Start();
		t.Join();
		cellThread = null;

		if (after != null)
			state = after; // also after an exception: what the cell defined before it stays
		if (interrupted)
			return Error("OperationCanceledException", "the cell was interrupted (SIGINT)", "");
		if (failure is CompilationErrorException ce)
			return Error("CompilationError", string.Join("\n", ce.Diagnostics.Select(d => d.ToString())), "");
		if (failure != null)
			return ErrorOf(failure, dir);
		if (after!.Exception != null)
			return ErrorOf(after.Exception, dir);
		string? result = after.ReturnValue == null ? null : Format(after.ReturnValue);
		return "{\"status\": \"ok\", \"result\": " + (result == null ? "null" : Json(result)) +
		       ", \"error\": null}";
	}

	static readonly PrintOptions printOptions = new() { MaximumOutputLength = ResultMax };

	// As C# interactive shows a value: strings quoted, collections listed.
	static string Format(object value)
	{
		try {
			return CSharpObjectFormatter.Instance.FormatObject(value, printOptions);
		} catch (Exception) {
			try {
				string s = value.ToString() ?? "";
				return s.Length <= ResultMax ? s : s.Substring(0, ResultMax) + "...";
			} catch (Exception e) {
				return $"({value.GetType().Name}: ToString threw {e.GetType().Name})";
			}
		}
	}

	// Never throws: an exception whose Message or ToString throws still gets a reply.
	static string ErrorOf(Exception e, string dir)
	{
		try {
			return DescribeError(e, dir);
		} catch (Exception) {
			return Error(e.GetType().Name, "(an exception that cannot be shown)", "");
		}
	}

	static string DescribeError(Exception e, string dir)
	{
		if (e is AggregateException ae && ae.InnerExceptions.Count == 1)
			e = ae.InnerExceptions[0];
		// frames name cells by file path: the session folder's own is noise
		string text = dir.Length > 0 ? e.ToString().Replace(dir.TrimEnd('/') + "/cell-", "cell-") : e.ToString();
		return Error(e.GetType().Name, e.Message, Trim(text));
	}

	// The exception's text without frames outside the user's cells (Roslyn's,
	// the driver's, the framework's).
	static string Trim(string text)
	{
		var keep = text.Split('\n').Select(l => l.TrimEnd('\r')).Where(l =>
			!l.StartsWith("   at ") && !l.StartsWith("--- End of") || l.Contains("Submission#"));
		return string.Join("\n", keep);
	}

	static string Error(string name, string value, string traceback) =>
		"{\"status\": \"error\", \"result\": null, \"error\": {\"name\": " + Json(name) +
		", \"value\": " + Json(value) + ", \"traceback\": " + Json(traceback) + "}}";

	static string Json(string s)
	{
		var b = new StringBuilder(s.Length + 2);
		b.Append('"');
		foreach (char c in s) {
			switch (c) {
			case '"': b.Append("\\\""); break;
			case '\\': b.Append("\\\\"); break;
			case '\n': b.Append("\\n"); break;
			case '\r': b.Append("\\r"); break;
			case '\t': b.Append("\\t"); break;
			default:
				if (c < ' ' || char.IsSurrogate(c))
					b.Append("\\u").Append(((int)c).ToString("x4"));
				else
					b.Append(c);
				break;
			}
		}
		return b.Append('"').ToString();
	}

	static void Send(string json)
	{
		byte[] body = Encoding.UTF8.GetBytes(json);
		byte[] data = Encoding.ASCII.GetBytes($"{token} {body.Length}\n").Concat(body).ToArray();
		for (int off = 0; off < data.Length;) {
			nint w = write(replyFd, ref data[off], data.Length - off);
			if (w < 0) {
				if (Marshal.GetLastPInvokeError() == EINTR)
					continue;
				Environment.Exit(1); // the host is gone
			}
			off += (int)w;
		}
	}

	// false at EOF
	static bool Fill()
	{
		if (reqStart > 0) {
			Array.Copy(reqBuf, reqStart, reqBuf, 0, reqEnd - reqStart);
			reqEnd -= reqStart;
			reqStart = 0;
		}
		if (reqEnd == reqBuf.Length)
			Array.Resize(ref reqBuf, reqBuf.Length * 2);
		for (;;) {
			nint r = read(reqFd, ref reqBuf[reqEnd], reqBuf.Length - reqEnd);
			if (r < 0 && Marshal.GetLastPInvokeError() == EINTR)
				continue;
			if (r <= 0)
				return false;
			reqEnd += (int)r;
			return true;
		}
	}

	static string? ReadLine()
	{
		for (;;) {
			int nl = Array.IndexOf(reqBuf, (byte)'\n', reqStart, reqEnd - reqStart);
			if (nl >= 0) {
				string line = Encoding.ASCII.GetString(reqBuf, reqStart, nl - reqStart);
				reqStart = nl + 1;
				return line;
			}
			if (!Fill())
				return null;
		}
	}

	static byte[]? ReadExact(int n)
	{
		while (reqEnd - reqStart < n)
			if (!Fill())
				return null;
		var b = new byte[n];
		Array.Copy(reqBuf, reqStart, b, 0, n);
		reqStart += n;
		return b;
	}
}
