#!/bin/bash
#PBS -J 1-4
#PBS -r n
echo $PBS_ARRAY_INDEX
