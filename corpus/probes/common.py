"""Shared logging for the probe programs: an 'engine'-style log, like the H200 cases."""
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
def log(name="engine"):
    return logging.getLogger(name)
