// top-level statements, relying on the implicit usings of a console project
string? line;
while ((line = Console.ReadLine()) != null)
    Console.WriteLine(line);
