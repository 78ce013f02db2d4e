import os
import sys

# pbh_worker is imported from the source tree, as the harness's workers do (python -m pbh_worker from this folder).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
