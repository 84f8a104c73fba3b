class P { static void Main() { int x; System.Console.WriteLine("hi") } }
