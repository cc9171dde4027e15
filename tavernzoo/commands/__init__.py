"""The ``tavernzoo`` commands, one module each (``add_parser(commands)``; its parser's ``run`` default runs
it), listed in tavernzoo/cli.py, which only builds the parser. A command is a thin layer over the library:
it parses arguments, calls the library, prints. The library never imports this package."""
