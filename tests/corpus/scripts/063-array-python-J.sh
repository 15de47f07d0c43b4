#!/usr/bin/python
#PBS -p 1 
#PBS -j oe
#PBS -J 1-90

import os
seed = os.getenv('PBS_ARRAY_INDEX')
