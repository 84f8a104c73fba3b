def main():
    print(undeclared_variable


main()
