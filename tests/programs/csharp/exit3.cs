Console.WriteLine("about to exit with 3");
return 3;
