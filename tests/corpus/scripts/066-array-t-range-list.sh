#!/bin/bash
#PBS -t 0-50,60,70,80
work $PBS_ARRAYID
