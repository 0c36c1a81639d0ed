# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
