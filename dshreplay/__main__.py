from dshreplay.cli import main

main(prog_name="dshreplay")
