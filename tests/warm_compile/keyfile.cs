// a strong-name key file: csc reads it; the warm server leaves this one to csc
[assembly: System.Reflection.AssemblyKeyFile("/etc/shadow")]
class P { static void Main() { System.Console.WriteLine("signed?"); } }
