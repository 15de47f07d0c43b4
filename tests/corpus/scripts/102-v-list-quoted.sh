#!/bin/bash
#PBS -v "arg1=1000,arg2=444"
#PBS -N vlist
echo $arg1 $arg2
