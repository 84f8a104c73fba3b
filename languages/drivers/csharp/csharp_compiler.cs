// csharp_compiler.cs: the warm C# compile server (docs/warm-compile.md), Roslyn
// kept loaded between compiles. languages/install-csharp.sh compiles it against
// the SDK's own Roslyn (the assemblies csc.dll runs) into
// $runtimes/dotnet9/compsrv/csharp_compiler.dll; its argument is the folder of
// csc.sh, whose files (refs.rsp, GlobalUsings.cs, main.runtimeconfig.json) it reads.
//
// How it works: at start it parses the same command line csc.sh gives csc
// (CSharpCommandLineParser, so options, warning level and references are csc's),
// loads the reference assemblies once, compiles a warm-up program and says
// READY. Each request then carries one source file as bytes: the server never
// opens a path a request names, so a compile sees only its own source (and the
// trusted files of this folder: GlobalUsings.cs, the references). It compiles as
// csc does (parse, then declaration, then emit diagnostics; stop at the first
// stage with errors), formats diagnostics as csc's command line does, and sends
// back the text, csc's exit status and the files csc.sh would leave in the box
// (main.dll, main.runtimeconfig.json). It never runs the code it compiles.
//
// Wire (stdin -> stdout, one request at a time):
//   COMPILE <name> <bytes>\n<source>
//   -> DONE <exit> <text_bytes> <nfiles>\n<text> then per file FILE <name> <bytes>\n<bytes>
//   -> or COLD <reason>\n: csc would read a file for this one (a strong-name key),
//      so the host compiles it with csc
// and once at start READY <roslyn version>\n. EOF on stdin: exit 0.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Emit;
using Microsoft.CodeAnalysis.Text;

static class CSharpCompiler
{
	const string BoxDir = "/box";
	const int SourceMax = 64 << 20;

	static CSharpCommandLineArguments args = null!;
	static List<MetadataReference> refs = new();
	static List<SyntaxTree> fixedTrees = new(); // GlobalUsings.cs
	static string here = "";
	static byte[] runtimeConfig = Array.Empty<byte>();

	static int Main(string[] argv)
	{
		if (argv.Length != 1) {
			Console.Error.WriteLine("usage: csharp_compiler CSC_FOLDER (the folder of csc.sh)");
			return 2;
		}
		here = argv[0];
		// the arguments csc.sh gives csc (languages/install-csharp.sh writes both:
		// keep them equal), with main.cs in /box
		var line = new List<string> {
			"-nologo", "-noconfig", "-nostdlib+", "-optimize+", "-deterministic",
			"-langversion:latest", "-out:main.dll", "@" + Path.Combine(here, "refs.rsp"),
			Path.Combine(here, "GlobalUsings.cs"), "main.cs",
		};
		args = CSharpCommandLineParser.Default.Parse(line, BoxDir, null, null);
		if (args.Errors.Any(d => d.Severity == DiagnosticSeverity.Error)) {
			Console.Error.WriteLine("csharp_compiler: " + string.Join("; ", args.Errors));
			return 2;
		}
		foreach (var r in args.MetadataReferences)
			refs.Add(MetadataReference.CreateFromFile(r.Reference));
		foreach (var f in args.SourceFiles)
			if (!f.Path.StartsWith(BoxDir + "/"))
				fixedTrees.Add(Parse(File.ReadAllBytes(f.Path), f.Path));
		runtimeConfig = File.ReadAllBytes(Path.Combine(here, "main.runtimeconfig.json"));
		var stdin = Console.OpenStandardInput();
		var stdout = Console.OpenStandardOutput();
		// warm-up: JIT the parser, binder and emitter before the first request
		Compile(Encoding.UTF8.GetBytes("class P { static void Main() { System.Console.WriteLine(1); } }"),
			"main.cs");
		var version = typeof(CSharpCompilation).Assembly.GetName().Version;
		Send(stdout, Encoding.ASCII.GetBytes($"READY {version}\n"));
		while (true) {
			string? head = ReadLine(stdin);
			if (head == null)
				return 0;
			var parts = head.Split(' ');
			if (parts.Length != 3 || parts[0] != "COMPILE" || !int.TryParse(parts[2], out int n) ||
			    n < 0 || n > SourceMax || parts[1].Contains('/') || parts[1].StartsWith('.')) {
				Console.Error.WriteLine("csharp_compiler: bad request: " + head);
				return 2;
			}
			var src = new byte[n];
			if (!ReadFull(stdin, src))
				return 2;
			var (exit, text, files) = Compile(src, parts[1]);
			if (exit < 0) { // csc would read a file: the host compiles this one cold
				Send(stdout, Encoding.ASCII.GetBytes("COLD " + text + "\n"));
				continue;
			}
			var reply = new MemoryStream();
			var tb = Encoding.UTF8.GetBytes(text);
			reply.Write(Encoding.ASCII.GetBytes($"DONE {exit} {tb.Length} {files.Count}\n"));
			reply.Write(tb);
			foreach (var (name, data) in files) {
				reply.Write(Encoding.ASCII.GetBytes($"FILE {name} {data.Length}\n"));
				reply.Write(data);
			}
			Send(stdout, reply.ToArray());
		}
	}

	static SyntaxTree Parse(byte[] bytes, string path)
	{
		// as csc reads a file: encoding detected from a BOM, else UTF-8
		var text = SourceText.From(new MemoryStream(bytes), args.Encoding, args.ChecksumAlgorithm,
					   throwIfBinaryDetected: false, canBeEmbedded: false);
		return CSharpSyntaxTree.ParseText(text, args.ParseOptions, path);
	}

	// Compiles one source as csc.sh does; returns csc's exit status, its output and
	// the files it would have written.
	static (int, string, List<(string, byte[])>) Compile(byte[] source, string name)
	{
		var outText = new StringBuilder();
		var files = new List<(string, byte[])>();
		var trees = new List<SyntaxTree>(fixedTrees) { Parse(source, BoxDir + "/" + name) };
		var options = args.CompilationOptions
				  .WithXmlReferenceResolver(null)
				  .WithSourceReferenceResolver(null)
				  .WithMetadataReferenceResolver(null)
				  .WithStrongNameProvider(null);
		var comp = CSharpCompilation.Create(args.CompilationName, trees, refs, options);
		var seen = new HashSet<Diagnostic>();
		bool Report(IEnumerable<Diagnostic> diags)
		{
			bool error = false;
			foreach (var d in diags) {
				if (d.Severity == DiagnosticSeverity.Hidden || d.IsSuppressed || !seen.Add(d))
					continue;
				if (d.Severity == DiagnosticSeverity.Error)
					error = true;
				outText.Append(Format(d)).Append('\n');
			}
			return error;
		}
		if (Report(comp.GetParseDiagnostics()))
			return (1, outText.ToString(), files);
		// a strong-name key file or container: csc reads it (from the box, or the
		// machine's key store), which a server that reads no file cannot do as csc
		foreach (var a in comp.Assembly.GetAttributes())
			if (a.AttributeClass?.Name is "AssemblyKeyFileAttribute" or "AssemblyKeyNameAttribute")
				return (-1, "the assembly names a strong-name key", files);
		if (Report(comp.GetDeclarationDiagnostics()))
			return (1, outText.ToString(), files);
		var pe = new MemoryStream();
		// csc's default Win32 resources (a version block and, for an exe, the
		// default manifest), so that the assembly is byte for byte csc's
		using var win32 = comp.CreateDefaultWin32Resources(true, args.NoWin32Manifest, null, null);
		EmitResult r = comp.Emit(pe, win32Resources: win32, options: args.EmitOptions);
		bool failed = Report(r.Diagnostics) || !r.Success;
		if (failed)
			return (1, outText.ToString(), files);
		files.Add((args.OutputFileName ?? "main.dll", pe.ToArray()));
		files.Add(("main.runtimeconfig.json", runtimeConfig));
		return (0, outText.ToString(), files);
	}

	// csc's command-line form: path(line,col): severity ID: message, the path
	// relative to the base folder when inside it
	static string Format(Diagnostic d)
	{
		string where = "";
		if (d.Location.IsInSource) {
			var span = d.Location.GetMappedLineSpan();
			string path = span.Path;
			if (path.StartsWith(BoxDir + "/"))
				path = path.Substring(BoxDir.Length + 1);
			where = $"{path}({span.StartLinePosition.Line + 1},{span.StartLinePosition.Character + 1}): ";
		}
		string sev = d.Severity switch {
			DiagnosticSeverity.Error => "error",
			DiagnosticSeverity.Warning => "warning",
			_ => "info",
		};
		return $"{where}{sev} {d.Id}: {d.GetMessage(System.Globalization.CultureInfo.InvariantCulture)}";
	}

	static void Send(Stream s, byte[] b)
	{
		s.Write(b);
		s.Flush();
	}

	static string? ReadLine(Stream s)
	{
		var b = new List<byte>();
		while (true) {
			int c = s.ReadByte();
			if (c < 0)
				return b.Count == 0 ? null : Encoding.ASCII.GetString(b.ToArray());
			if (c == '\n')
				return Encoding.ASCII.GetString(b.ToArray());
			if (b.Count > 4096)
				return "";
			b.Add((byte)c);
		}
	}

	static bool ReadFull(Stream s, byte[] buf)
	{
		int off = 0;
		while (off < buf.Length) {
			int k = s.Read(buf, off, buf.Length - off);
			if (k <= 0)
				return false;
			off += k;
		}
		return true;
	}
}
