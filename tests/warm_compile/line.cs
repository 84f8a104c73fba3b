// #line names another file in diagnostics: the compiler must not read it
#line 5 "/etc/passwd"
class P { static void Main() { int x = 1; } }
#line default
#warning back at main.cs
#pragma checksum "/etc/shadow" "{ff1816ec-aa5e-4d10-87f7-6f4963833460}" "ab007f1d23d9"
