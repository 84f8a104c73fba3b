class Main {}
