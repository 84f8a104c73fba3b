System.Console.WriteLine("hello world");
