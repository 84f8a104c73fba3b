// prints the SHA-256 of what the compile left in the box: the warm and the cold
// compile must leave the same bytes (deterministic csc)
using System.Security.Cryptography;
foreach (var f in new[] { "main.dll", "main.runtimeconfig.json" })
	Console.WriteLine(f + " " + Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(f))));
