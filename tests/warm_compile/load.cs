// script directives that would read files: errors in a program
#load "/etc/passwd"
#r "/box/../etc/passwd"
class P { static void Main() { } }
