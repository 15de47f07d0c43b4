#!/bin/bash
#PBS -J 1-100%5
#PBS -l select=1:ncpus=1
./task $PBS_ARRAY_INDEX
