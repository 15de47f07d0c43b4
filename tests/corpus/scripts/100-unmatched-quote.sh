#!/bin/bash
#PBS -N "unterminated
#PBS -l walltime=1:00:00
echo x
