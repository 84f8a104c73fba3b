// The judge's harness for function problems in C# (judge/grading/harness.h):
// the user's code under #line "solution.cs", then this, then the tests'
// arguments as literals (a generated part of __JudgeH). The method is found
// by name, case-insensitively (LeetCode's C# names are TwoSum for twoSum), in
// Solution first. One record per call on the real stdout: "\x1ejudge:NONCE
// {json}"; Console output during a call is kept apart. Expected values never
// come here: the host compares.
static partial class __JudgeH
{
	static System.IO.Stream real;
	static string nonce;

	internal static string U8(string s)
	{
		var b = new byte[s.Length];
		for (int i = 0; i < s.Length; i++) b[i] = (byte)s[i];
		return System.Text.Encoding.UTF8.GetString(b);
	}

	static void Esc(System.Text.StringBuilder o, string s)
	{
		o.Append('"');
		foreach (char c in s)
		{
			if (c == '"' || c == '\\') o.Append('\\').Append(c);
			else if (c < 0x20) o.Append("\\u").Append(((int)c).ToString("x4"));
			else o.Append(c);
		}
		o.Append('"');
	}

	static void Put(System.Text.StringBuilder o, object v)
	{
		var inv = System.Globalization.CultureInfo.InvariantCulture;
		switch (v)
		{
		case null: o.Append("null"); return;
		case bool b: o.Append(b ? "true" : "false"); return;
		case string s: Esc(o, s); return;
		case char ch: Esc(o, ch.ToString()); return;
		case double d: o.Append(double.IsFinite(d) ? d.ToString("R", inv) : "null"); return;
		case float f: o.Append(float.IsFinite(f) ? ((double)f).ToString("R", inv) : "null"); return;
		case decimal m: o.Append(m.ToString(inv)); return;
		case System.IConvertible c when v.GetType().IsPrimitive: o.Append(c.ToString(inv)); return;
		case System.Collections.IDictionary dict:
			o.Append('{');
			bool first = true;
			foreach (System.Collections.DictionaryEntry e in dict)
			{
				if (!first) o.Append(',');
				first = false;
				Esc(o, System.Convert.ToString(e.Key, inv));
				o.Append(':');
				Put(o, e.Value);
			}
			o.Append('}');
			return;
		case System.Collections.IEnumerable list:
			o.Append('[');
			bool f1 = true;
			foreach (var x in list) { if (!f1) o.Append(','); f1 = false; Put(o, x); }
			o.Append(']');
			return;
		case System.Runtime.CompilerServices.ITuple t:
			o.Append('[');
			for (int i = 0; i < t.Length; i++) { if (i > 0) o.Append(','); Put(o, t[i]); }
			o.Append(']');
			return;
		default:
			throw new System.InvalidCastException("a value of type " + v.GetType().Name + " is not JSON");
		}
	}

	static void Emit(string rec)
	{
		var b = System.Text.Encoding.UTF8.GetBytes("\x1ejudge:" + nonce + " " + rec + "\n");
		real.Write(b, 0, b.Length);
		real.Flush();
	}

	static System.Reflection.MethodInfo Find()
	{
		const System.Reflection.BindingFlags all = System.Reflection.BindingFlags.Public |
			System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance |
			System.Reflection.BindingFlags.Static | System.Reflection.BindingFlags.IgnoreCase;
		var types = new System.Collections.Generic.List<System.Type>();
		foreach (var t in typeof(__JudgeH).Assembly.GetTypes())
			if (t != typeof(__JudgeH)) { if (t.Name == "Solution") types.Insert(0, t); else types.Add(t); }
		foreach (var t in types)
			foreach (var m in t.GetMethods(all))
				if (string.Equals(m.Name, Name, System.StringComparison.OrdinalIgnoreCase) && m.DeclaringType == t)
					return m;
		return null;
	}

	static string Rec(int i, bool ok, long ms, string stdout)
	{
		var o = new System.Text.StringBuilder();
		o.Append("{\"i\":").Append(i).Append(",\"ok\":").Append(ok ? "true" : "false");
		o.Append(",\"ms\":").Append(ms).Append(",\"stdout\":");
		Esc(o, stdout.Length > 65536 ? stdout.Substring(0, 65536) : stdout);
		return o.ToString();
	}

	static string Fail(System.Exception e)
	{
		var o = new System.Text.StringBuilder(",\"error\":{\"type\":");
		Esc(o, e.GetType().Name);
		o.Append(",\"message\":");
		Esc(o, e.Message.Length > 2000 ? e.Message.Substring(0, 2000) : e.Message);
		return o.Append(",\"line\":0}}").ToString();
	}

	static void Main()
	{
		nonce = System.Console.In.ReadLine()?.Trim() ?? "";
		real = System.Console.OpenStandardOutput();
		var stdout = System.Console.Out;
		var m = Find();
		var tests = Tests();
		for (int i = 0; i < tests.Length; i++)
		{
			if (m == null)
			{
				Emit(Rec(i, false, 0, "") + Fail(new System.MissingMethodException("no method " + Name + " (in Solution or any class)")));
				return;
			}
			var cap = new System.IO.StringWriter();
			System.Console.SetOut(cap);
			var sw = System.Diagnostics.Stopwatch.StartNew();
			string tail;
			bool ok = true;
			try
			{
				object self = m.IsStatic ? null : System.Activator.CreateInstance(m.DeclaringType);
				object r = m.Invoke(self, tests[i]);
				var o = new System.Text.StringBuilder(",\"value\":");
				Put(o, m.ReturnType == typeof(void) ? null : r);
				tail = o.Append('}').ToString();
			}
			catch (System.Exception e)
			{
				ok = false;
				var inner = e is System.Reflection.TargetInvocationException && e.InnerException != null ? e.InnerException : e;
				tail = Fail(inner);
			}
			System.Console.SetOut(stdout);
			Emit(Rec(i, ok, sw.ElapsedMilliseconds, cap.ToString()) + tail);
		}
		Emit("{\"end\":true}");
	}
}
